package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
)

// refundArgs are a struct-declared tool's arguments: a 64-bit integer a double cannot hold
// and a bounded one.
type refundArgs struct {
	OrderID     string `json:"order_id" tool:"maxlen=16" desc:"The order to refund."`
	AmountCents int64  `json:"amount_cents" tool:"min=1,max=100000"`
	Ledger      uint64 `json:"ledger"`
}

func declareRefund(tb testing.TB) *tool.Declared[refundArgs, struct{}] {
	tb.Helper()
	d, err := tool.Declare[refundArgs, struct{}]("payments.refund", "Refunds an order.")
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// asking records the requests its model is asked.
type asking struct {
	model.Model
	reqs []*model.Request
}

func (a *asking) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	a.reqs = append(a.reqs, req)
	return a.Model.Generate(ctx, req)
}

func externalEvent(text string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
}

// A struct-declared tool is shown to the model by property names with JSON-integer bounds,
// and the model's native call, carrying 2^53+1, arrives exactly in the signed intent's
// args_json; the handler reads it back typed.
func TestStructDeclaredToolCall(t *testing.T) {
	refund := declareRefund(t)
	script, err := model.ParseScript([]byte(`{"tool_calls":[{"id":"c1","name":"payments.refund","arguments":{"ledger":9007199254740993,"order_id":"A-1","amount_cents":4599}}]}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := &asking{Model: script}
	var got refundArgs
	handler := func(hc *agent.Context, tr agent.Trigger) error {
		decls := []agent.ToolDecl{refund.Decl()}
		turn, err := hc.Chat(agent.Chat{Messages: userMessages(tr), Tools: decls})
		if err != nil {
			return err
		}
		if got, err = refund.Args(turn.Calls[0]); err != nil {
			return err
		}
		_, err = hc.RunTools(turn, decls)
		return err
	}
	a, err := agent.New(agent.Definition{Name: "typed", Handler: handler, Model: m, ModelID: "scripted-1",
		Tools: map[string]agent.ToolDecl{refund.Name(): refund.Decl()}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := host.Activate(context.Background(), a, host.MapStore{}, externalEvent("refund A-1"), host.Deps{Keyring: testKeyring(t)})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"4599","payments.refund.args.ledger":"9007199254740993"}`
	if len(res.Intents) != 1 || res.Intents[0].GetArgsJson() != want || res.Intents[0].GetToolName() != "payments.refund" {
		t.Fatalf("intents %v", res.Intents)
	}
	if got != (refundArgs{OrderID: "A-1", AmountCents: 4599, Ledger: 1<<53 + 1}) {
		t.Fatalf("typed arguments %+v", got)
	}
	params := string(m.reqs[0].Tools[0].Parameters)
	for _, w := range []string{`"order_id":{"type":"string","maxLength":16,"x-max-bytes":16,"description":"The order to refund."}`, `"amount_cents":{"type":"integer","minimum":1,"maximum":100000}`, `"ledger":{"type":"integer","minimum":0,"maximum":18446744073709551615}`} {
		if !strings.Contains(params, w) {
			t.Errorf("the model is not shown %s:\n%s", w, params)
		}
	}
	if strings.Contains(params, "payments.refund.args.order_id") {
		t.Errorf("the model is shown stable ids:\n%s", params)
	}
	if d := m.reqs[0].Tools[0].Digest; d != refund.Schema().PresentedDigest() {
		t.Errorf("the request names the parameters by %s", d)
	}
	// Out of bounds, a model's call fails the activation as proposal_refused.
	over, _ := model.ParseScript([]byte(`{"tool_calls":[{"id":"c1","name":"payments.refund","arguments":{"order_id":"A-1","amount_cents":100001,"ledger":1}}]}` + "\n"))
	b, err := a.WithModel(over, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err = host.Activate(context.Background(), b, host.MapStore{}, externalEvent("refund A-1"), host.Deps{Keyring: testKeyring(t)})
	if !errors.Is(err, &agent.Error{Reason: records.ReasonProposalRefused}) || !errors.Is(err, &negotiate.Error{Code: negotiate.CodeCanonicalize, Rule: negotiate.Rule(interaction.RuleIntegerRange)}) || len(res.Intents) != 0 {
		t.Fatalf("an amount over its maximum: %v %v", err, res.Intents)
	}
}

// A handler's own tool calls are admitted by the tool's declared schema like a model's: in
// bounds they become intents with canonical arguments, out of bounds they fail the activation
// as proposal_refused and emit nothing.
func TestCodeWrittenArgs(t *testing.T) {
	refund := declareRefund(t)
	typed, err := refund.Call(refundArgs{OrderID: "A-1", AmountCents: 1, Ledger: 1<<64 - 1})
	if err != nil {
		t.Fatal(err)
	}
	const canonical = `{"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"1","payments.refund.args.ledger":"18446744073709551615"}`
	for _, tc := range []struct {
		name, tool, args string
		want             string // the intent's args_json; "" when refused
	}{
		{"typed call", refund.Name(), typed.ArgsJSON, canonical},
		{"canonical", refund.Name(), canonical, canonical},
		{"numbers and any order", refund.Name(), `{"payments.refund.args.ledger":18446744073709551615, "payments.refund.args.amount_cents":1,"payments.refund.args.order_id":"A-1"}`, canonical},
		{"under the minimum", refund.Name(), `{"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"0","payments.refund.args.ledger":"1"}`, ""},
		{"over 64 bits", refund.Name(), `{"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"1","payments.refund.args.ledger":"18446744073709551616"}`, ""},
		{"string too long", refund.Name(), `{"payments.refund.args.order_id":"A-1234567890123456","payments.refund.args.amount_cents":"1","payments.refund.args.ledger":"1"}`, ""},
		{"missing field", refund.Name(), `{"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"1"}`, ""},
		{"by property names", refund.Name(), `{"order_id":"A-1","amount_cents":1,"ledger":1}`, ""},
		{"not an object", refund.Name(), `"A-1"`, ""},
		{"an undeclared tool is not admitted", "audit", `{"anything":1}`, `{"anything":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handler := func(hc *agent.Context, tr agent.Trigger) error {
				_, err := hc.Tool(tc.tool, tc.args)
				return err
			}
			a, err := agent.New(agent.Definition{Name: "code", Handler: handler, Tools: map[string]agent.ToolDecl{refund.Name(): refund.Decl()}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := host.Activate(context.Background(), a, host.MapStore{}, externalEvent("go"), host.Deps{Keyring: testKeyring(t)})
			if tc.want == "" {
				if !errors.Is(err, &agent.Error{Reason: records.ReasonProposalRefused}) || len(res.Intents) != 0 || len(res.DeadLetters) != 1 {
					t.Fatalf("refused call: %v, %d intents", err, len(res.Intents))
				}
				return
			}
			if err != nil || len(res.Intents) != 1 || res.Intents[0].GetArgsJson() != tc.want {
				t.Fatalf("%v %v", err, res.Intents)
			}
		})
	}
}
