package main

import (
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent/agenttest"
)

// The triage agent in a plain test, without Beam: a question gets an answer; a bug report
// opens a ticket, and the ticket's result gets the reporter a reply naming it.
func TestTriageWithTheTestKit(t *testing.T) {
	a, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{}) // the agent's recorded model answers

	h.Send("user-1", []byte("How do I reset my password?"))
	if got := h.Replies("user-1"); len(got) != 1 || !strings.Contains(got[0], "Forgot password") {
		t.Fatalf("user-1 replies %q", got)
	}

	h.Send("user-2", []byte("Checkout fails with a 500 error every time!"))
	ticket := h.Intent("user-2", ToolOpenTicket)
	if want := `{"triage.open_ticket.title":"Checkout returns HTTP 500","triage.open_ticket.priority":"1"}`; ticket.GetArgsJson() != want {
		t.Fatalf("ticket arguments %s, want %s", ticket.GetArgsJson(), want)
	}
	h.Answer(ticket, []byte(`{"ticket":"T-17"}`))
	if got := h.Replies("user-2"); len(got) != 1 || !strings.Contains(got[0], "T-17") {
		t.Fatalf("user-2 replies %q", got)
	}
	for _, k := range []string{"user-1", "user-2"} {
		if dl := h.Outputs(k).DeadLetters; len(dl) != 0 {
			t.Fatalf("%s dead letters %v", k, dl)
		}
	}
}
