package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// gatedRefunds is a chat handler whose refunds above 100 need an approval: the gate is the
// refund tool's declaration, so RunTools asks for it. Its second model call is answered with
// the tool messages it was sent, so the reply shows them in the order they were sent.
func gatedRefunds(t *testing.T, calls []model.ToolCall, modelCalls *atomic.Int64) *agent.Agent {
	t.Helper()
	refundArgs, err := tool.FromJSONSchema("refund.args", []byte(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":1000}}}`))
	if err != nil {
		t.Fatal(err)
	}
	noteArgs, err := tool.FromJSONSchema("notify.args", []byte(`{"type":"object","properties":{"text":{"type":"string","maxLength":64}}}`))
	if err != nil {
		t.Fatal(err)
	}
	decls := []agent.ToolDecl{
		{Name: "refund", Args: refundArgs, Denied: "refund refused", NeedsApproval: func(_ *agent.Context, call agent.ToolCall) bool {
			amount, _ := call.Args.Lookup("refund.args.amount")
			return amount.Int() > 100
		}},
		{Name: "lookup", Args: noteArgs, Inline: func(_ context.Context, args []byte) ([]byte, error) { return []byte("found " + string(args)), nil }},
		{Name: "notify", Args: noteArgs},
	}
	handler := func(hc *agent.Context, tr agent.Trigger) error {
		msgs := []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}
		for range 2 {
			turn, err := hc.Chat(agent.Chat{Messages: msgs, Tools: decls})
			if err != nil {
				return err
			}
			if len(turn.Calls) == 0 {
				return hc.Reply(turn.Text)
			}
			more, err := hc.RunTools(turn, decls)
			if err != nil {
				return err
			}
			msgs = append(msgs, more...)
		}
		return hc.Fail(records.ReasonBudgetExceeded, "two turns")
	}
	m := agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		modelCalls.Add(1)
		var answers []string
		for _, msg := range req.Messages {
			if msg.Role == model.RoleTool {
				answers = append(answers, msg.ToolCallID+"="+msg.Content)
			}
		}
		if len(answers) == 0 {
			return &model.Response{ToolCalls: calls}, nil
		}
		return agenttest.Text(strings.Join(answers, "; ")), nil
	})
	a, err := agent.New(agent.Definition{Name: "gated", Handler: handler, Model: m, ModelID: "gated-1",
		Tools: map[string]agent.ToolDecl{"refund": {Args: refundArgs}, "notify": {Args: noteArgs}}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// gateStep is one input of a gate case and what must hold after it.
type gateStep struct {
	do      string   // "send", "answer TOOL", "approve TOOL", "reject TOOL NOTE"
	pending []string // the pending intents after it: "KIND tool args"
	journal []string // the suspended journal's operations after it: "OP name"
}

func TestRunToolsGates(t *testing.T) {
	refund := func(id string, amount int) model.ToolCall {
		return model.ToolCall{ID: id, Name: "refund", Arguments: fmt.Sprintf(`{"refund.args.amount":%d}`, amount)}
	}
	for _, tc := range []struct {
		name  string
		calls []model.ToolCall
		steps []gateStep
		reply string
	}{{
		name:  "small refund runs ungated",
		calls: []model.ToolCall{refund("c1", 20)},
		steps: []gateStep{
			{do: "send", pending: []string{`TOOL refund {"refund.args.amount":"20"}`}, journal: []string{"CHAT ", "TOOL refund"}},
			{do: "answer refund"},
		},
		reply: `c1={"ok":"refund"}`,
	}, {
		name:  "large refund approved",
		calls: []model.ToolCall{refund("c1", 500)},
		steps: []gateStep{
			{do: "send", pending: []string{`APPROVAL refund {"refund.args.amount":"500"}`}, journal: []string{"CHAT ", "APPROVAL refund"}},
			{do: "approve refund", pending: []string{`TOOL refund {"refund.args.amount":"500"}`}, journal: []string{"CHAT ", "APPROVAL refund", "TOOL refund"}},
			{do: "answer refund"},
		},
		reply: `c1={"ok":"refund"}`,
	}, {
		name:  "large refund rejected with a note",
		calls: []model.ToolCall{refund("c1", 500)},
		steps: []gateStep{
			{do: "send", pending: []string{`APPROVAL refund {"refund.args.amount":"500"}`}, journal: []string{"CHAT ", "APPROVAL refund"}},
			{do: "reject refund over the limit"},
		},
		reply: `c1=refund refused (note: over the limit)`,
	}, {
		name: "inline, gated and plain calls of one turn",
		calls: []model.ToolCall{refund("c1", 500), {ID: "c2", Name: "lookup", Arguments: `{"notify.args.text":"A-1"}`},
			{ID: "c3", Name: "notify", Arguments: `{"notify.args.text":"hi"}`}, refund("c4", 30)},
		steps: []gateStep{
			// The inline run first, then the ungated calls in one suspension, then the gated one.
			{do: "send", pending: []string{`TOOL notify {"notify.args.text":"hi"}`, `TOOL refund {"refund.args.amount":"30"}`},
				journal: []string{"CHAT ", "INLINE lookup", "TOOL notify", "TOOL refund"}},
			{do: "answer notify", pending: []string{`TOOL refund {"refund.args.amount":"30"}`},
				journal: []string{"CHAT ", "INLINE lookup", "TOOL notify", "TOOL refund"}},
			{do: "answer refund", pending: []string{`APPROVAL refund {"refund.args.amount":"500"}`},
				journal: []string{"CHAT ", "INLINE lookup", "TOOL notify", "TOOL refund", "APPROVAL refund"}},
			{do: "approve refund", pending: []string{`TOOL refund {"refund.args.amount":"500"}`},
				journal: []string{"CHAT ", "INLINE lookup", "TOOL notify", "TOOL refund", "APPROVAL refund", "TOOL refund"}},
			{do: "answer refund"},
		},
		reply: `c1={"ok":"refund"}; c2=found {"notify.args.text":"A-1"}; c3={"ok":"notify"}; c4={"ok":"refund"}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			// The traffic runs twice, on two harnesses: each input's outputs must be the same
			// bytes, and every resumed run replays the journal without a model call.
			var outs [2][][]byte
			for run := range outs {
				var modelCalls atomic.Int64
				h := agenttest.New(t, gatedRefunds(t, tc.calls, &modelCalls), agenttest.Options{})
				for _, st := range tc.steps {
					res := gateDo(t, h, st.do)
					if len(res.DeadLetters) > 0 {
						t.Fatalf("%s: dead letter %v", st.do, res.DeadLetters[0])
					}
					outs[run] = append(outs[run], marshalOutputs(t, res))
					if got := describePending(h.Pending("k")); strings.Join(got, "\n") != strings.Join(st.pending, "\n") {
						t.Errorf("%s: pending\n%s\nwant\n%s", st.do, strings.Join(got, "\n"), strings.Join(st.pending, "\n"))
					}
					if got := journalOps(h.Journal("k")); strings.Join(got, ",") != strings.Join(st.journal, ",") {
						t.Errorf("%s: journal %q, want %q", st.do, got, st.journal)
					}
				}
				if got := h.Replies("k"); len(got) != 1 || got[0] != tc.reply {
					t.Errorf("replies %q, want %q", got, tc.reply)
				}
				if n := modelCalls.Load(); n != 2 {
					t.Errorf("%d model calls, want 2 (a resumed run replays its journal)", n)
				}
			}
			for i := range outs[0] {
				if string(outs[0][i]) != string(outs[1][i]) {
					t.Errorf("step %d (%s): the outputs differ between two runs", i, tc.steps[i].do)
				}
			}
		})
	}
}

// gateDo delivers a step's input to key "k".
func gateDo(t *testing.T, h *agenttest.Harness, do string) *host.Result {
	t.Helper()
	f := strings.SplitN(do, " ", 3)
	if f[0] == "send" {
		return h.Send("k", []byte("refund please"))
	}
	ti := h.Intent("k", f[1])
	switch f[0] {
	case "answer":
		return h.Answer(ti, []byte(`{"ok":"`+f[1]+`"}`))
	case "approve":
		return h.Approve(ti, "ops")
	case "reject":
		ap := &pb.AgentEnvelope_Approval{IntentId: ti.GetIntentId(), Approver: "ops", DecidedAtMs: h.Now(), Note: f[2]}
		if err := intent.SignApproval(ap, ti, h.Keyring()); err != nil {
			t.Fatal(err)
		}
		return h.Deliver(&pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), Payload: &pb.AgentEnvelope_Approval_{Approval: ap}})
	}
	t.Fatalf("unknown step %q", do)
	return nil
}

func describePending(tis []*pb.ToolIntent) []string {
	var out []string
	for _, ti := range tis {
		out = append(out, ti.GetKind().String()+" "+ti.GetToolName()+" "+ti.GetArgsJson())
	}
	return out
}

func journalOps(j *pb.HandlerJournal) []string {
	var out []string
	for _, e := range j.GetEntries() {
		out = append(out, e.GetOp().String()+" "+e.GetName())
	}
	return out
}

// A gate is asked only of side-effecting calls: an inline tool whose declaration has one
// runs inline.
func TestInlineToolIsNeverGated(t *testing.T) {
	var modelCalls atomic.Int64
	a := gatedRefunds(t, []model.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"notify.args.text":"A-1"}`}}, &modelCalls)
	h := agenttest.New(t, a, agenttest.Options{})
	h.Send("k", []byte("look"))
	if got := h.Replies("k"); len(got) != 1 || got[0] != `c1=found {"notify.args.text":"A-1"}` {
		t.Fatalf("replies %q", got)
	}
}

func TestOutcome(t *testing.T) {
	failed := &agent.Error{Reason: records.ReasonBudgetExceeded, Detail: "d"}
	other := errors.New("framework")
	for _, tc := range []struct {
		name    string
		err     error
		want    error
		foreign bool
	}{
		{"nil", nil, nil, false},
		{"suspended", agent.ErrSuspended, agent.ErrSuspended, false},
		{"suspended, wrapped", fmt.Errorf("node: %w", agent.ErrSuspended), agent.ErrSuspended, false},
		{"suspended, joined with a failure", errors.Join(failed, agent.ErrSuspended), agent.ErrSuspended, false},
		{"replied", fmt.Errorf("tool: %w", agent.ErrReplied), nil, false},
		{"failed", failed, failed, false},
		{"failed, wrapped", fmt.Errorf("graph: %w", failed), failed, false},
		{"foreign", other, other, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err, foreign := agent.Outcome(tc.err)
			if err != tc.want || foreign != tc.foreign {
				t.Errorf("Outcome = %v, %v; want %v, %v", err, foreign, tc.want, tc.foreign)
			}
		})
	}
}

// The Go context a run hands out carries its Context, through derived contexts; another does
// not.
func TestFromContext(t *testing.T) {
	type key struct{}
	var found, derived, same bool
	handler := func(hc *agent.Context, _ agent.Trigger) error {
		got, ok := agent.FromContext(hc.Context())
		found = ok && got == hc
		got, ok = agent.FromContext(context.WithValue(hc.Context(), key{}, 1))
		derived = ok && got == hc
		same = hc.Context() == hc.Context()
		return hc.Reply("ok")
	}
	a, err := agent.New(agent.Definition{Name: "ctx", Handler: handler})
	if err != nil {
		t.Fatal(err)
	}
	agenttest.New(t, a, agenttest.Options{}).Send("k", []byte("x"))
	if !found || !derived || !same {
		t.Errorf("found %v, through a derived context %v, one context per run %v", found, derived, same)
	}
	if _, ok := agent.FromContext(context.Background()); ok {
		t.Error("a Context found in the background context")
	}
	//lint:ignore SA1012 a nil context is what a careless caller passes
	if _, ok := agent.FromContext(nil); ok {
		t.Error("a Context found in a nil context")
	}
}

// Arguments code outside the runtime hands a tool are admitted as a model's are; a refusal
// fails the activation as proposal_refused, even when the handler carries on.
func TestAdmitCall(t *testing.T) {
	args, err := tool.FromJSONSchema("refund.args", []byte(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":1000}}}`))
	if err != nil {
		t.Fatal(err)
	}
	decl := agent.ToolDecl{Name: "refund", Args: args}
	for _, tc := range []struct {
		name, args, want string // want: the call's canonical arguments, or the dead letter's reason
	}{
		{"canonical", `{"refund.args.amount":"20"}`, `{"refund.args.amount":"20"}`},
		{"a JSON number, spaced", ` { "refund.args.amount" : 20 } `, `{"refund.args.amount":"20"}`},
		{"not an object", `[20]`, string(records.ReasonProposalRefused)},
		{"an undeclared member", `{"refund.args.amount":20,"extra":1}`, string(records.ReasonProposalRefused)},
		{"out of range", `{"refund.args.amount":1001}`, string(records.ReasonProposalRefused)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handler := func(hc *agent.Context, _ agent.Trigger) error {
				call, err := hc.AdmitCall(decl, "c1", tc.args)
				if err != nil {
					return hc.Reply("carried on") // the failure is sticky
				}
				return hc.Reply(call.ID + " " + call.Tool + " " + call.ArgsJSON)
			}
			a, err := agent.New(agent.Definition{Name: "admit", Handler: handler})
			if err != nil {
				t.Fatal(err)
			}
			res := agenttest.New(t, a, agenttest.Options{}).Send("k", nil)
			switch {
			case strings.HasPrefix(tc.want, "{"):
				if len(res.Finals) != 1 || res.Finals[0].GetMessage() != "c1 refund "+tc.want {
					t.Errorf("finals %v, dead letters %v", res.Finals, res.DeadLetters)
				}
			case len(res.DeadLetters) != 1 || res.DeadLetters[0].GetReason() != tc.want || len(res.Finals) != 0:
				t.Errorf("finals %v, dead letters %v", res.Finals, res.DeadLetters)
			}
		})
	}
}

func TestToolMessage(t *testing.T) {
	if got := agent.ToolMessage("c1", "row"); got.Role != model.RoleTool || got.ToolCallID != "c1" || got.Content != "row" {
		t.Errorf("ToolMessage %+v", got)
	}
}

// Whatever a framework hands a tool, AdmitCall never panics, and what it admits is canonical:
// admitted again, it is the same bytes.
func FuzzAdmitCall(f *testing.F) {
	for _, s := range []string{`{"refund.args.amount":20}`, `{"refund.args.amount":"9007199254740993"}`, `[1]`, `{`, `{"x":1}`, ` {"refund.args.amount" : 1e2} `} {
		f.Add(s)
	}
	args, err := tool.FromJSONSchema("refund.args", []byte(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":1000}}}`))
	if err != nil {
		f.Fatal(err)
	}
	decl := agent.ToolDecl{Name: "refund", Args: args}
	var input string
	var first, again agent.ToolCall
	var firstErr, againErr error
	a, err := agent.New(agent.Definition{Name: "fuzz", Handler: func(hc *agent.Context, _ agent.Trigger) error {
		first, firstErr = hc.AdmitCall(decl, "c", input)
		if firstErr == nil {
			again, againErr = hc.AdmitCall(decl, "c", first.ArgsJSON)
		}
		return nil
	}})
	if err != nil {
		f.Fatal(err)
	}
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}}
	f.Fuzz(func(t *testing.T, s string) {
		input, first, again, firstErr, againErr = s, agent.ToolCall{}, agent.ToolCall{}, nil, nil
		if _, err := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{}); (err == nil) != (firstErr == nil) {
			t.Fatalf("activation %v, admission %v", err, firstErr)
		}
		if firstErr == nil && (againErr != nil || again.ArgsJSON != first.ArgsJSON) {
			t.Fatalf("%q admitted as %q, then as %q (%v)", s, first.ArgsJSON, again.ArgsJSON, againErr)
		}
	})
}
