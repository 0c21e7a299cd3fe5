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
