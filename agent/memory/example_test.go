package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/memory"
	"github.com/beamagents/beamagents/model"
)

// A support agent that remembers the last three messages verbatim and the gist of every
// earlier one. The model here is a Go function that names the messages it folds; a real
// one writes the summary. In a test function, pass its *testing.T to agenttest.New.
func Example() {
	conversation := memory.Ring{Name: "conversation", Keep: 3, MaxBytes: 4096,
		Compact: memory.Summarize(memory.SummaryOptions{MaxBytes: 512, Fold: 2})}
	a, _ := agent.New(agent.Definition{Name: "support", ModelID: "m", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		if err := conversation.Append(hc, tr.Event); err != nil {
			return err
		}
		summary, recent, err := conversation.Entries(hc)
		if err != nil {
			return err
		}
		return hc.Reply(fmt.Sprintf("summary %q, recent %q", summary, recent))
	}})
	summarize := agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		var folded []string
		for _, line := range strings.Split(agenttest.Last(req), "\n") {
			if strings.HasPrefix(line, "[") {
				folded = append(folded, line[strings.Index(line, " ")+1:])
			}
		}
		return agenttest.Text(`{"fields":{"` + memory.SummaryField + `":"asked about ` + strings.Join(folded, " and ") + `"}}`), nil
	})
	h := agenttest.New(&testing.T{}, a, agenttest.Options{Model: summarize})
	for _, msg := range []string{"a refund", "a delivery", "an invoice", "a password"} {
		h.Send("customer-1", []byte(msg))
	}
	replies := h.Replies("customer-1")
	fmt.Println(replies[2])
	fmt.Println(replies[3])
	// Output:
	// summary "", recent ["a refund" "a delivery" "an invoice"]
	// summary "asked about a refund and a delivery", recent ["an invoice" "a password"]
}
