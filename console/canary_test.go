package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// byAgent names agent on every event of msgs (trace events).
func byAgent(agent string, msgs []proto.Message) []proto.Message {
	for _, m := range msgs {
		ev := m.(*pb.TraceEvent)
		ev.Attributes[tracing.AttrAgent] = agent
	}
	return msgs
}

// A canary's two slices, compared: customer-2's lookup ran on the baseline (a minute of
// event time, two model calls), customer-4's approval wait and customer-7's model error on
// the candidate (its dead letter counts for the agent that ran the key).
func TestCanaryComparesAgents(t *testing.T) {
	dir := t.TempDir()
	traces := append(byAgent("support", lookupTrace("customer-2")), byAgent("support-next", approvalWait("customer-4"))...)
	traces = append(traces, byAgent("support-next", []proto.Message{
		event("customer-7", 0, pb.TraceEvent_ACTIVATION_START, 0, T0+1000, T0+1000, map[string]string{tracing.AttrActivationKind: tracing.KindExternalEvent}),
		event("customer-7", 0, pb.TraceEvent_ACTIVATION_END, 0, T0+2000, T0+2000, map[string]string{tracing.AttrActivationStatus: tracing.StatusOK}),
	})...)
	files := map[string][]byte{
		"traces.binpb":       frames(t, traces...),
		"dead_letters.binpb": frames(t, modelError(t, "customer-7", T0+9000)),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := openStore(t, filepath.Join(t.TempDir(), "console.db"))
	scan(t, st, dir)
	agents, err := st.Canary()
	if err != nil {
		t.Fatal(err)
	}
	if len(agents) != 2 || agents[0].Agent != "support" || agents[1].Agent != "support-next" {
		t.Fatalf("agents %+v", agents)
	}
	base, cand := agents[0], agents[1]
	if base.Activations != 1 || base.Ended != 1 || base.ModelCalls != 2 || base.Tokens != 190+22+236+29 || base.Dead != 0 ||
		base.LatencyP50Ms != 61000 || base.LatencyMaxMs != 61000 {
		t.Errorf("baseline %+v", base)
	}
	if cand.Activations != 2 || cand.Ended != 1 || cand.Dead != 1 || cand.DeadRate != 0.5 ||
		len(cand.Reasons) != 1 || cand.Reasons[0].Reason != "model_error" || cand.LatencyP95Ms != 1000 {
		t.Errorf("candidate %+v", cand)
	}

	h, err := console.New(console.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/canary")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	for _, want := range []string{`data-agent="support"`, `data-agent="support-next"`, `data-activations="2"`, `data-dead="1"`, "model_error: 1"} {
		if res.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("GET /canary: %d, no %s in\n%s", res.StatusCode, want, body)
		}
	}
}
