package devices_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
)

// The registered dispatch tool in a real effector: the agent's signed intent is executed
// once (a second delivery is answered from the dedup store with the same ticket), and its
// signed result resumes the agent to the operator's summary naming that ticket.
func TestDispatchToolInTheEffector(t *testing.T) {
	a, err := devices.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	script, err := model.ParseScript([]byte(strings.Replace(keyedByWhatWasAsked, `"last":"T-4411"`, `"last":"\"ticket\":\"T-"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	h := agenttest.New(t, a, agenttest.Options{Model: script})
	const key = "dev-9007199254740993"
	h.Send(key, []byte(`{"device_id":"9007199254740993","milli_c":91000}`))
	ti := h.Intent(key, devices.ToolDispatch)

	bindings, err := effector.AgentBindings(devices.Name)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clock := func() time.Time { return time.UnixMilli(h.Now()) } // the effector's clock at the intent's event time
	e, err := effector.New(effector.Options{Keyring: h.Keyring(), Store: st, Tools: bindings, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var results []*pb.ToolResult
	for range 2 {
		out, err := e.Handle(context.Background(), ti)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, out.Envelope.GetToolResult())
	}
	r := results[0]
	if r.GetStatus() != pb.ToolResult_OK || !strings.Contains(string(r.GetPayload()), `"device_id":"9007199254740993"`) ||
		string(results[1].GetPayload()) != string(r.GetPayload()) {
		t.Fatalf("results %v", results)
	}
	if m := e.Metrics().Snapshot(); m["executed"] != 1 {
		t.Fatalf("executed %d times", m["executed"])
	}
	h.Deliver(&pb.AgentEnvelope{EntityKey: []byte(key), Payload: &pb.AgentEnvelope_ToolResult{ToolResult: r}})
	if got := h.Replies(key); len(got) != 1 || len(h.Outputs(key).DeadLetters) != 0 {
		t.Fatalf("replies %q, dead letters %v", got, h.Outputs(key).DeadLetters)
	}
}
