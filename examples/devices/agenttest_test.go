package devices_test

import (
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// keyedByWhatWasAsked answers the devices agent by the last message of each request: the
// anomaly, the inline lookup's row, the dispatch's result. It keeps answering if the handler
// adds or reorders operations, which a script keyed by position would not.
const keyedByWhatWasAsked = `{"last":"reads 91000 milli-°C","tool_calls":[{"id":"call_lookup","name":"devices.lookup","arguments":{"device_id":9007199254740993}}]}
{"last":"KV-9 boiler sensor","tool_calls":[{"id":"call_dispatch","name":"devices.dispatch","arguments":{"device_id":9007199254740993,"reason":"boiler at 91 °C"}}]}
{"last":"T-4411","response_text":"Dispatched a technician: ticket T-4411."}
`

// The devices agent through the test kit: a quiet reading needs no model, an anomaly looks
// the device up inline and dispatches; the dispatch is answered and the operator gets the
// summary; a second anomaly whose dispatch nobody answers escalates, then fails closed.
func TestDevicesWithTheTestKit(t *testing.T) {
	a, err := devices.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	script, err := model.ParseScript([]byte(keyedByWhatWasAsked))
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{Model: script})
	const key = "dev-9007199254740993"

	h.Send(key, []byte(`{"device_id":"9007199254740993","milli_c":55000}`))
	if n := len(h.Outputs(key).Traces); n == 0 || len(h.Pending(key)) != 0 || script.Calls() != 0 {
		t.Fatalf("quiet reading: %d traces, %d pending, %d model calls", n, len(h.Pending(key)), script.Calls())
	}
	h.Advance(time.Minute)
	h.Send(key, []byte(`{"device_id":"9007199254740993","milli_c":91000}`))
	dispatch := h.Intent(key, devices.ToolDispatch)
	if !strings.Contains(dispatch.GetArgsJson(), `"device_id":"9007199254740993"`) {
		t.Fatalf("dispatch arguments %s", dispatch.GetArgsJson())
	}
	ops := h.Journal(key).GetEntries()
	if len(ops) != 6 || ops[3].GetOp() != pb.JournalEntry_INLINE || ops[3].GetName() != devices.ToolLookup {
		t.Fatalf("journal %v", ops)
	}
	h.Advance(5 * time.Minute)
	h.Answer(dispatch, []byte(`{"ticket":"T-4411","eta_minutes":35}`))
	if got := h.Replies(key); len(got) != 1 || got[0] != "Dispatched a technician: ticket T-4411." {
		t.Fatalf("replies %q", got)
	}
	if !strings.Contains(string(h.Memory(key)[devices.RingKey]), "91000") {
		t.Fatalf("the ring lacks the anomaly: %q", h.Memory(key)[devices.RingKey])
	}

	// Nobody answers the next dispatch: the deadline (10 minutes) re-emits it twice, then
	// fails closed.
	h.Send(key, []byte(`{"device_id":"9007199254740993","milli_c":91000}`))
	h.Intent(key, devices.ToolDispatch)
	h.Advance(time.Hour)
	out := h.Outputs(key)
	if len(out.Intents) != 4 || len(out.DeadLetters) != 1 || out.DeadLetters[0].GetReason() != string(records.ReasonActivationTimeout) {
		t.Fatalf("%d intents, dead letters %v", len(out.Intents), out.DeadLetters)
	}
	if _, armed := h.Timers(key)[host.TagDeadline]; armed || len(h.Pending(key)) != 0 {
		t.Fatal("the key still waits after failing closed")
	}
}
