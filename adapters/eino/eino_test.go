package eino_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/beamagents/beamagents/adapters/eino"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

func dispatchDecl(t *testing.T) agent.ToolDecl {
	da, err := devices.DispatchArgs()
	if err != nil {
		t.Fatal(err)
	}
	return agent.ToolDecl{Name: devices.ToolDispatch, Description: devices.DispatchDescription, Args: da}
}

// Outside a handler run the model and the tools refuse to answer.
func TestUnbound(t *testing.T) {
	tool, err := eino.NewTool(dispatchDecl(t))
	if err != nil {
		t.Fatal(err)
	}
	m := eino.NewModel(tool.Decl())
	if _, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage("hi")}); !errors.Is(err, eino.ErrUnbound) {
		t.Errorf("Generate: %v", err)
	}
	if _, err := tool.InvokableRun(context.Background(), `{}`); !errors.Is(err, eino.ErrUnbound) {
		t.Errorf("InvokableRun: %v", err)
	}
}

// A tool Eino binds must have a runtime declaration: its closed schema is what the model is
// sent and what admits the calls.
func TestWithToolsUndeclared(t *testing.T) {
	m := eino.NewModel(dispatchDecl(t))
	if _, err := m.WithTools([]*schema.ToolInfo{{Name: "devices.selfdestruct"}}); err == nil {
		t.Fatal("an undeclared tool was bound")
	}
	if _, err := m.WithTools([]*schema.ToolInfo{{Name: devices.ToolDispatch}}); err != nil {
		t.Fatal(err)
	}
}

// Arguments that Eino's tools node hands a tool after a rewrite are admitted again: a
// non-canonical rewrite (the id as a JSON number) fails the activation as proposal_refused,
// no intent emitted.
func TestRewrittenArgumentsRefused(t *testing.T) {
	tool, err := eino.NewTool(dispatchDecl(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg := eino.ToolsConfig(tool)
	cfg.ToolArgumentsHandler = func(_ context.Context, _, _ string) (string, error) {
		return `{"device_id":9007199254740993,"reason":"r"}`, nil
	}
	ra, err := react.NewAgent(context.Background(), &react.AgentConfig{ToolCallingModel: eino.NewModel(tool.Decl()), ToolsConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	script := `{"entity":"k","seq":0,"step":0,"tool_calls":[{"id":"c1","name":"devices.dispatch","arguments":{"device_id":9007199254740993,"reason":"r"}}]}` + "\n"
	m, err := model.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Definition{Name: "rewrite", Model: m, ModelID: "m",
		Tools: map[string]agent.ToolDecl{devices.ToolDispatch: {Args: tool.Decl().Args}},
		Handler: eino.Handler(func(ctx context.Context, hc *agent.Context, _ agent.Trigger) error {
			msg, err := ra.Generate(ctx, []*schema.Message{schema.UserMessage("go")})
			if err != nil {
				return err
			}
			return hc.Reply(msg.Content)
		})})
	if err != nil {
		t.Fatal(err)
	}
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(`{}`)}}
	res, _ := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{})
	if len(res.DeadLetters) != 1 || res.DeadLetters[0].GetReason() != string(records.ReasonProposalRefused) || len(res.Intents) != 0 {
		t.Fatalf("dead letters %v, %d intents", res.DeadLetters, len(res.Intents))
	}
}

// A suspension Eino wrapped suspends (Eino's step limit: TestTurnLimitAsNative in the example).
func TestOutcome(t *testing.T) {
	if err := eino.Outcome(nil, errors.Join(errors.New("node"), agent.ErrSuspended)); err != agent.ErrSuspended {
		t.Errorf("suspension: %v", err)
	}
	if err := eino.Outcome(nil, nil); err != nil {
		t.Errorf("nil: %v", err)
	}
}
