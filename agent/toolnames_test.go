package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// Tool names are sent to every provider under their wire names (model/provider.WireName):
// names that cannot make the round trip are refused when the agent is built, for the tools
// its definition declares, and before any model call, for the tools a Chat declares.
func TestToolNamesNoProviderCanCarry(t *testing.T) {
	m, _ := model.ParseScript(nil)
	for _, tc := range []struct {
		name  string
		tools []string
		ok    bool
	}{
		{"dotted names", []string{"devices.lookup", "devices.dispatch"}, true},
		{"collision", []string{"devices.lookup", "devices_lookup"}, false},
		{"control character", []string{"look\tup"}, false},
		{"empty", []string{""}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			specs := map[string]agent.ToolDecl{}
			decls := make([]agent.ToolDecl, len(tc.tools))
			for i, n := range tc.tools {
				specs[n] = agent.ToolDecl{Args: lookupArgsSchema(t)}
				decls[i] = agent.ToolDecl{Name: n, Args: lookupArgsSchema(t)}
			}
			handler := func(hc *agent.Context, tr agent.Trigger) error {
				_, err := hc.Chat(agent.Chat{Messages: userMessages(tr), Tools: decls})
				return err
			}
			_, err := agent.New(agent.Definition{Name: "named", Handler: handler, Model: m, Tools: specs})
			if tc.ok != (err == nil) {
				t.Fatalf("New: %v", err)
			}
			if err != nil && (!errors.Is(err, agent.ErrDefinition) || !errors.Is(err, model.ErrToolName)) {
				t.Fatalf("New: %v is not a definition error of model_tool_name", err)
			}
			if tc.ok {
				return
			}
			// The same names declared by a Chat alone: the call is refused before it is made.
			a, err := agent.New(agent.Definition{Name: "named", Handler: handler, Model: m})
			if err != nil {
				t.Fatal(err)
			}
			res, err := host.Activate(context.Background(), a, host.MapStore{}, &pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}, host.Deps{Keyring: testKeyring(t)})
			if !errors.Is(err, model.ErrToolName) || !errors.Is(err, &agent.Error{Reason: records.ReasonInternalPanic}) {
				t.Fatalf("Activate: %v", err)
			}
			if len(res.DeadLetters) != 1 || len(res.Intents) != 0 {
				t.Fatalf("result %+v", res)
			}
		})
	}
}
