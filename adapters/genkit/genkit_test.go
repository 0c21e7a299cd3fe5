package genkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"

	"github.com/beamagents/beamagents/adapters/genkit"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
)

// Outside a handler run the runtime's model refuses to answer; a tool without a schema and a
// name declared twice are refused when the instance is built.
func TestUnboundAndRefusedTools(t *testing.T) {
	da, err := devices.DispatchArgs()
	if err != nil {
		t.Fatal(err)
	}
	ga, err := genkit.New(context.Background(), agent.ToolDecl{Name: devices.ToolDispatch, Args: da})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ga.Generate(context.Background(), ai.WithPrompt("hi")); !errors.Is(err, genkit.ErrUnbound) {
		t.Errorf("Generate outside a run: %v", err)
	}
	for name, tools := range map[string][]agent.ToolDecl{
		"no schema":   {{Name: "y"}},
		"named twice": {{Name: "x", Args: da}, {Name: "x", Args: da}},
	} {
		if _, err := genkit.New(context.Background(), tools...); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Genkit runs a turn's tools concurrently: the turn's calls are still answered once, at the
// positions a native handler's RunTools takes (the inline lookup, the ungated dispatch, then
// the gated one behind its approval), and the next request carries the tool messages in call
// order.
func TestTurnOfSeveralCalls(t *testing.T) {
	la, err := devices.LookupArgs()
	if err != nil {
		t.Fatal(err)
	}
	da, err := devices.DispatchArgs()
	if err != nil {
		t.Fatal(err)
	}
	decls := devices.ToolDecls(la, da)
	decls[1].NeedsApproval = func(_ *agent.Context, call agent.ToolCall) bool { return strings.Contains(call.ArgsJSON, "urgent") }
	ga, err := genkit.New(context.Background(), decls...)
	if err != nil {
		t.Fatal(err)
	}
	handler := ga.Handler(func(ctx context.Context, hc *agent.Context, _ agent.Trigger) error {
		resp, err := ga.Generate(ctx, ai.WithMessages(ai.NewUserTextMessage("go")), ai.WithMaxTurns(2))
		if err != nil {
			return err
		}
		return hc.Reply(resp.Text())
	})
	m := agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		var answers []string
		for _, msg := range req.Messages {
			if msg.Role == model.RoleTool {
				answers = append(answers, msg.ToolCallID+"="+msg.Content)
			}
		}
		if len(answers) > 0 {
			return agenttest.Text(strings.Join(answers, "; ")), nil
		}
		return &model.Response{ToolCalls: []model.ToolCall{
			{ID: "c1", Name: devices.ToolDispatch, Arguments: `{"device_id":"17","reason":"urgent"}`},
			{ID: "c2", Name: devices.ToolLookup, Arguments: `{"device_id":"17"}`},
			{ID: "c3", Name: devices.ToolDispatch, Arguments: `{"device_id":"18","reason":"routine"}`},
		}}, nil
	})
	a, err := agent.New(agent.Definition{Name: "several", Handler: handler, Model: m, ModelID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{})
	h.Send("k", []byte("go"))
	var ops []string
	for _, e := range h.Journal("k").GetEntries() {
		ops = append(ops, e.GetOp().String()+" "+e.GetName())
	}
	if want := "CHAT ,INLINE devices.lookup,TOOL devices.dispatch"; strings.Join(ops, ",") != want {
		t.Fatalf("journal %q, want %s", ops, want)
	}
	h.Answer(h.Intent("k", devices.ToolDispatch), []byte(`{"ticket":"T-18"}`))
	approval := h.Intent("k", devices.ToolDispatch)
	if approval.GetKind() != pb.ToolIntent_APPROVAL || !strings.Contains(approval.GetArgsJson(), "urgent") {
		t.Fatalf("pending %v", approval)
	}
	h.Approve(approval, "ops")
	h.Answer(h.Intent("k", devices.ToolDispatch), []byte(`{"ticket":"T-17"}`))
	lookup, _ := devices.Lookup(context.Background(), []byte(`{"device_id":"17"}`))
	want := `c1={"ticket":"T-17"}; c2=` + string(lookup) + `; c3={"ticket":"T-18"}`
	if got := h.Replies("k"); len(got) != 1 || got[0] != want {
		t.Fatalf("replies %q, want %q; outputs %v", got, want, h.Outputs("k").DeadLetters)
	}
}
