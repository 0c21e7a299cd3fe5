package agenttest_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/burst"
)

// SendBurst runs its events as one activation, as a pipeline gathers them under
// Definition.Burst.
func TestSendBurst(t *testing.T) {
	a, err := agent.New(agent.Definition{Name: "bursts", Burst: burst.Rule{Window: 2 * time.Second},
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			return hc.Reply(fmt.Sprintf("%d: %s", len(tr.Events()), tr.Event))
		}})
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{})
	h.SendBurst("c1", []byte("hi"), []byte("my order is late"))
	h.Send("c1", []byte("thanks"))
	if got, want := h.Replies("c1"), []string{"2: hi\nmy order is late", "1: thanks"}; !slices.Equal(got, want) {
		t.Fatalf("replies %q, want %q", got, want)
	}
}
