package bindings_test

import (
	"testing"

	"github.com/beamagents/beamagents/agent/bindings"
)

// The default prompt shows an approver's note with the outcome, and is unchanged without one
// (the messages are part of every replay-cache key).
func TestDefaultPromptShowsTheNote(t *testing.T) {
	build := bindings.DefaultPrompt("sys")
	for _, tc := range []struct {
		note, want string
	}{
		{"", "payments.refund denied: alice"},
		{"over the limit for this customer", "payments.refund denied: alice (note: over the limit for this customer)"},
	} {
		msgs := build(&bindings.PromptInput{Trigger: []byte("refund A-1"), Steps: []bindings.StepView{
			{Step: 0, CaseID: "c.refund", Proposal: `{"case":"c.refund"}`, Tool: "payments.refund", Outcome: "denied", Message: "alice", Note: tc.note},
		}})
		if got := msgs[len(msgs)-1].Content; got != tc.want {
			t.Fatalf("note %q: last message %q, want %q", tc.note, got, tc.want)
		}
	}
}
