package transforms

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statedir"
)

// A drain records the envelopes a key had not run as the input they came as: without the
// grants of the tenant budget's admission (which the input refuses), a parked one at the time
// it came with. The restart reads them as any input and admits them again.
func TestDrainUnstampsGrants(t *testing.T) {
	const key = "acme/k-1" // the budget test agent's tenant is the key up to "/"
	capture := statedir.NewCapture()
	defer capture.Close()
	opts := Options{Agent: "tenant-budget", Config: []byte("park"), AllowUnsignedIntents: true, Capture: capture.ID()}.withDefaults()
	r := &fakeRunner{key: []byte(key), timers: map[string]int64{}}
	w := r.worker(t, opts)
	defer w.Teardown()

	granted := &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t0, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("one")},
		BudgetGrant: &pb.BudgetGrant{Tenant: "acme", WindowStartMs: t0, WindowMs: 60_000, Tokens: 100}}
	parked := &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t0 + 60_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("two")},
		BudgetGrant: &pb.BudgetGrant{Tenant: "acme", ParkedFromMs: t0 + 5_000}}
	plain := &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t0 + 7_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("three")}}
	for _, env := range []*pb.AgentEnvelope{granted, parked, plain} {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		r.element(t, w, b, env.GetEventTimeMs())
	}
	capture.Freeze()
	r.fire(t, w, drive.OrderTag(t0))
	if capture.Len() != 1 {
		t.Fatalf("%d keys recorded, want 1", capture.Len())
	}

	d, err := statedir.Begin(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Commit(capture, time.Time{}); err != nil {
		t.Fatal(err)
	}
	_, envGlob := d.Restore()
	paths, _ := filepath.Glob(envGlob)
	if len(paths) != 1 {
		t.Fatalf("envelope files %v", paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := records.Split(data)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := records.Frames(body)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"one": t0, "two": t0 + 5_000, "three": t0 + 7_000}
	for _, f := range frames {
		env, _, err := records.DecodeEnvelope(records.Binary, f)
		if err != nil {
			t.Errorf("the restart's input refuses a recorded envelope: %v", err)
			continue
		}
		text := string(env.GetExternalEvent())
		if at, ok := want[text]; !ok || env.GetEventTimeMs() != at {
			t.Errorf("envelope %q at %d, want at %d", text, env.GetEventTimeMs(), at)
		}
		delete(want, text)
	}
	if len(want) > 0 {
		t.Errorf("not recorded: %v", want)
	}
}
