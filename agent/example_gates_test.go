package agent_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// A refund tool whose large calls wait for a person: RunTools turns such a call into an
// APPROVAL intent, and a rejection into the tool's Denied message with the approver's note.
func ExampleToolDecl_needsApproval() {
	args, err := tool.FromJSONSchema("refund.args", []byte(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":1000}}}`))
	if err != nil {
		panic(err)
	}
	refund := agent.ToolDecl{Name: "refund", Args: args, Denied: "REJECTED: the refund was not approved",
		NeedsApproval: func(_ *agent.Context, call agent.ToolCall) bool {
			amount, _ := call.Args.Lookup("refund.args.amount")
			return amount.Int() > 100
		}}
	decls := []agent.ToolDecl{refund}
	handler := func(hc *agent.Context, tr agent.Trigger) error {
		msgs := []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}
		for range 3 {
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
		return hc.Fail(records.ReasonBudgetExceeded, "no answer after three turns")
	}
	// The model asks for a refund of 250, then repeats what the tool message said.
	m := agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
			return agenttest.Text(last.Content), nil
		}
		return &model.Response{ToolCalls: []model.ToolCall{{ID: "c1", Name: "refund", Arguments: `{"refund.args.amount":250}`}}}, nil
	})
	a, err := agent.New(agent.Definition{Name: "refunds", Handler: handler, Model: m, ModelID: "m"})
	if err != nil {
		panic(err)
	}
	kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	deps, state, key := host.Deps{Keyring: kr}, host.MapStore{}, []byte("customer-1")

	res, _ := host.Activate(context.Background(), a, state, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("refund A-1")}}, deps)
	state.Apply(res)
	ti := res.Intents[0]
	fmt.Println(ti.GetKind(), ti.GetToolName(), ti.GetArgsJson())

	res, _ = host.Activate(context.Background(), a, state, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 2000,
		Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{IntentId: ti.GetIntentId(), Approver: "ops", Note: "over the monthly limit"}}}, deps)
	fmt.Println(len(res.Intents), res.Finals[0].GetMessage())
	// Output:
	// APPROVAL refund {"refund.args.amount":"250"}
	// 0 REJECTED: the refund was not approved (note: over the monthly limit)
}
