package agenttest_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// refunds is the agent under test: it looks the order up inline, asks the model what to do,
// and refunds through a side-effecting tool, behind an approval above 100.
func refunds(t *testing.T, lookups *atomic.Int64) *agent.Agent {
	t.Helper()
	lookup := func(_ context.Context, args []byte) ([]byte, error) {
		lookups.Add(1)
		return []byte(`{"order":"` + string(args) + `","paid":250}`), nil
	}
	handler := func(hc *agent.Context, tr agent.Trigger) error {
		order, err := hc.Inline("orders.lookup", tr.Event, lookup)
		if err != nil {
			return err
		}
		if err := hc.Put("last_order", tr.Event); err != nil {
			return err
		}
		turn, err := hc.Chat(agent.Chat{Messages: []model.Message{
			{Role: model.RoleSystem, Content: "Answer refund, small refund or no."},
			{Role: model.RoleUser, Content: "Order: " + string(order)},
		}})
		if err != nil {
			return err
		}
		switch turn.Text {
		case "small refund":
			res, err := hc.Tool("payments.refund", `{"amount":20}`)
			if err != nil {
				return err
			}
			return hc.Reply("refunded 20: " + res.GetStatus().String())
		case "refund":
			res, approved, err := hc.Approved("payments.refund", `{"amount":250}`)
			if err != nil {
				return err
			}
			if !approved {
				return hc.Reply("refund rejected")
			}
			return hc.Reply("refunded 250: " + string(res.GetPayload()))
		}
		return hc.Reply("no refund")
	}
	a, err := agent.New(agent.Definition{Name: "refunds", Handler: handler, ModelID: "refunds-test",
		Limits: agent.Limits{ToolTimeoutMs: 60_000, ApprovalTimeoutMs: 3_600_000, MaxEscalations: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// answers is the model of the tests, keyed by what it was asked.
var answers = agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
	switch last := agenttest.Last(req); {
	case strings.Contains(last, `"A-1"`):
		return agenttest.Text("small refund"), nil
	case strings.Contains(last, `"A-2"`):
		return agenttest.Text("refund"), nil
	case strings.Contains(last, `"A-3"`):
		return agenttest.Text("no"), nil
	}
	return nil, errors.New("unexpected request")
})

func TestHarnessDrivesAHandler(t *testing.T) {
	var lookups atomic.Int64
	h := agenttest.New(t, refunds(t, &lookups), agenttest.Options{Model: answers})

	// A small refund: one signed tool intent, answered; the reply follows.
	h.Send("c1", []byte(`"A-1"`))
	ti := h.Intent("c1", "payments.refund")
	if ti.GetKind() != pb.ToolIntent_TOOL || ti.GetArgsJson() != `{"amount":20}` {
		t.Fatalf("intent %v", ti)
	}
	if j := h.Journal("c1"); j == nil || len(j.GetEntries()) != 4 {
		t.Fatalf("journal of the suspension: %v", j)
	}
	h.Advance(time.Second)
	h.Answer(ti, []byte(`{"ok":true}`))
	if got := h.Replies("c1"); len(got) != 1 || got[0] != "refunded 20: OK" {
		t.Fatalf("replies %q", got)
	}
	if len(h.Pending("c1")) != 0 || h.Journal("c1") != nil {
		t.Fatal("the key still waits")
	}
	if got := string(h.Memory("c1")["last_order"]); got != `"A-1"` {
		t.Fatalf("memory %q", got)
	}

	// A large refund: an approval first; approved, the gated call; answered, the reply.
	h.Send("c2", []byte(`"A-2"`))
	h.Approve(h.Intent("c2", "payments.refund"), "alice")
	call := h.Intent("c2", "payments.refund")
	if call.GetKind() != pb.ToolIntent_TOOL {
		t.Fatalf("after the approval: %v", call)
	}
	h.Answer(call, []byte("done"))
	if got := h.Replies("c2"); len(got) != 1 || got[0] != "refunded 250: done" {
		t.Fatalf("replies %q", got)
	}

	// Rejected.
	h.Send("c3", []byte(`"A-2"`))
	h.Reject(h.Intent("c3", "payments.refund"), "bob")
	if got := h.Replies("c3"); len(got) != 1 || got[0] != "refund rejected" {
		t.Fatalf("replies %q", got)
	}
	// The inline lookup ran once per activation, never again on resumption.
	if n := lookups.Load(); n != 3 {
		t.Fatalf("inline lookups %d, want 3", n)
	}
	for _, k := range []string{"c1", "c2", "c3"} {
		if dl := h.Outputs(k).DeadLetters; len(dl) != 0 {
			t.Fatalf("%s dead letters %v", k, dl)
		}
	}
}

// Event time passes only by Advance: a deadline escalates (the intent again), then fails
// closed; the intent is no longer pending.
func TestHarnessAdvancePastDeadlines(t *testing.T) {
	var lookups atomic.Int64
	h := agenttest.New(t, refunds(t, &lookups), agenttest.Options{Model: answers})
	h.Send("c1", []byte(`"A-1"`))
	ti := h.Intent("c1", "payments.refund")
	if at := h.Timers("c1")[host.TagDeadline]; at != h.Now()+60_000 {
		t.Fatalf("deadline at %d, now %d", at, h.Now())
	}
	if res := h.Advance(59 * time.Second); len(res) != 0 {
		t.Fatalf("%d firings before the deadline", len(res))
	}
	h.Advance(time.Second)
	if n := len(h.Outputs("c1").Intents); n != 2 {
		t.Fatalf("%d intents after the first deadline, want the escalation's re-emission", n)
	}
	h.Advance(time.Hour)
	dl := h.Outputs("c1").DeadLetters
	if len(dl) != 1 || dl[0].GetReason() != string(records.ReasonActivationTimeout) {
		t.Fatalf("dead letters %v", dl)
	}
	if len(h.Pending("c1")) != 0 {
		t.Fatal("the failed intent is still pending")
	}
	// A late answer is refused like in a pipeline: a dead letter, nothing resumed.
	h.Answer(ti, []byte("late"))
	if len(h.Replies("c1")) != 0 || len(h.Outputs("c1").DeadLetters) != 2 {
		t.Fatalf("late answer: replies %q, dead letters %v", h.Replies("c1"), h.Outputs("c1").DeadLetters)
	}
}

// An answer the keyring did not sign is refused as in a run with --keyring.
func TestHarnessVerifiesAnswers(t *testing.T) {
	var lookups atomic.Int64
	h := agenttest.New(t, refunds(t, &lookups), agenttest.Options{Model: answers})
	h.Send("c1", []byte(`"A-1"`))
	ti := h.Intent("c1", "payments.refund")
	h.Deliver(&pb.AgentEnvelope{EntityKey: []byte("c1"), Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: ti.GetIntentId(), EntityKey: ti.GetEntityKey(), Seq: ti.GetSeq(), Status: pb.ToolResult_OK, Payload: []byte("forged")}}})
	dl := h.Outputs("c1").DeadLetters
	if len(dl) != 1 || dl[0].GetReason() != string(records.ReasonResultRefused) || len(h.Pending("c1")) != 1 {
		t.Fatalf("unsigned answer: dead letters %v, pending %d", dl, len(h.Pending("c1")))
	}
}

// A script keyed by what was asked answers whatever the order of the calls.
func TestHarnessWithAScript(t *testing.T) {
	script, err := model.ParseScript([]byte(`{"last":"\"A-3\"","response_text":"no"}
{"last":"\"A-1\"","response_text":"small refund"}
`))
	if err != nil {
		t.Fatal(err)
	}
	var lookups atomic.Int64
	h := agenttest.New(t, refunds(t, &lookups), agenttest.Options{Model: script})
	h.Send("c2", []byte(`"A-3"`))
	h.Send("c1", []byte(`"A-1"`))
	h.Answer(h.Intent("c1", "payments.refund"), nil)
	if a, b := h.Replies("c1"), h.Replies("c2"); len(a) != 1 || a[0] != "refunded 20: OK" || len(b) != 1 || b[0] != "no refund" {
		t.Fatalf("replies %q %q", a, b)
	}
	// A request no rule answers is the agent's model_error, as a provider's failure would be.
	h.Send("c3", []byte(`"A-9"`))
	if dl := h.Outputs("c3").DeadLetters; len(dl) != 1 || dl[0].GetReason() != string(records.ReasonModelError) {
		t.Fatalf("unscripted request: %v", dl)
	}
}

// A handler's timer wakes when Advance passes it, and its signal wait takes a signal the
// harness signed.
func TestHarnessDrivesWaits(t *testing.T) {
	handler := func(hc *agent.Context, tr agent.Trigger) error {
		if err := hc.Sleep(time.Minute); err != nil {
			return err
		}
		sig, err := hc.Await("go")
		if err != nil {
			return err
		}
		return hc.Reply("went " + string(sig.GetPayload()))
	}
	a, err := agent.New(agent.Definition{Name: "waits", Handler: handler})
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{})
	h.Send("c1", []byte("start"))
	if at := h.Timers("c1")[host.TagDeadline]; at != h.Now()+60_000 {
		t.Fatalf("wake at %d, now %d", at, h.Now())
	}
	h.Advance(time.Minute)
	h.Signal("c1", "go", "g-1", []byte("now"))
	if got := h.Replies("c1"); len(got) != 1 || got[0] != "went now" {
		t.Fatalf("replies %q, dead letters %v", got, h.Outputs("c1").DeadLetters)
	}
}
