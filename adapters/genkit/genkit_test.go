package genkit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/firebase/genkit/go/ai"

	"github.com/beamagents/beamagents/adapters/genkit"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/devices"
)

// Outside a handler run the runtime's model refuses to answer; a gated inline tool and a
// tool without a schema are refused when the instance is built.
func TestUnboundAndRefusedTools(t *testing.T) {
	da, err := devices.DispatchArgs()
	if err != nil {
		t.Fatal(err)
	}
	ga, err := genkit.New(context.Background(), genkit.Tool{Decl: agent.ToolDecl{Name: devices.ToolDispatch, Args: da}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ga.Generate(context.Background(), ai.WithPrompt("hi")); !errors.Is(err, genkit.ErrUnbound) {
		t.Errorf("Generate outside a run: %v", err)
	}
	for name, tool := range map[string]genkit.Tool{
		"gated inline": {Decl: agent.ToolDecl{Name: "x", Args: da, Inline: devices.Lookup}, Gate: &genkit.Gate{}},
		"no schema":    {Decl: agent.ToolDecl{Name: "y"}},
	} {
		if _, err := genkit.New(context.Background(), tool); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
