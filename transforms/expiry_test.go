package transforms_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// expiryAgent flushes an idle key's working memory to the long-term namespace "history"
// when the key expires after a day.
const expiryAgent = "expiry-flush"

const day = int64(24 * 3600 * 1000)

func init() {
	agent.Register(expiryAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: expiryAgent, Handler: expiryHandler, FlushOnExpiry: "history",
			Limits: agent.Limits{IdleTTLMs: day}})
	})
}

// expiryHandler replies with what its memory and the long-term store hold of "tone", then
// keeps the event as the new tone.
func expiryHandler(hc *agent.Context, tr agent.Trigger) error {
	tone, inMemory, err := hc.Get("tone")
	if err != nil {
		return err
	}
	recalled, found, err := hc.Recall("history", "tone")
	if err != nil {
		return err
	}
	if err := hc.Put("tone", tr.Event); err != nil {
		return err
	}
	return hc.Reply(fmt.Sprintf("memory %q %v; recalled %q %v", tone, inMemory, recalled, found))
}

// A key's memory flushed to the long-term store at its idle expiry is recalled when the key
// returns, with the same outputs, and the same entries left in each store, on the driver,
// RunAgent and the fast path, each with a store of its own.
func TestExpiryFlushThenRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prism pipeline")
	}
	ctx := context.Background()
	set := &scenario.Set{}
	for i := range 12 {
		key := fmt.Sprintf("cust-%02d", i)
		set.Keys = append(set.Keys, key)
		t0 := scenario.T0 + int64(i)*1000
		times := []int64{t0, t0 + 3600_000} // within a day: remembered in the cell
		if i%3 != 0 {
			times = append(times, t0+3*day) // after the expiry: recalled from the store
		}
		for j, at := range times {
			env := &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at,
				Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: fmt.Appendf(nil, "tone-%d-%d", i, j)}}
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(env)
			set.Records = append(set.Records, b)
		}
	}
	ref, kr := keyringRef(t)
	open := func(path string) ltm.Store {
		s, err := backend.OpenSQLite(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	dir := t.TempDir()
	a, err := agent.Build(expiryAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	driverStore := open(filepath.Join(dir, "driver.db"))
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr, LongTermMemory: driverStore}, OrderResolutionMs: 250}}
	want := driveSet(t, d, set)

	stream, batch := t.TempDir(), t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, set.Records))
	opts := transforms.Options{Agent: expiryAgent, Keyring: ref, OrderResolutionMs: 1000, MemoryStore: "sqlite:" + filepath.Join(dir, "stream.db")}
	writeOutputs(s, stream, transforms.RunAgent(s, opts, keyed), dead)
	opts.MemoryStore = "sqlite:" + filepath.Join(dir, "batch.db")
	writeOutputs(s, batch, transforms.RunAgentBatch(s, opts, keyed), dead)
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	for _, o := range pipeline.Outputs() {
		for path, out := range map[string]string{"RunAgent": stream, "RunAgentBatch": batch} {
			got := readRecords(t, filepath.Join(out, o.Name+".binpb"))
			if i := firstDifference(got, want[o.Name]); i >= 0 {
				t.Errorf("%s: %s differs from the driver at record %d:\n  %s\n  driver: %s", o.Name, path, i, render(o.Type, got, i), render(o.Type, want[o.Name], i))
			}
		}
	}
	recalled := 0
	for _, b := range want[pipeline.FinalsName] {
		f := &pb.FinalReply{}
		if err := proto.Unmarshal(b, f); err != nil {
			t.Fatal(err)
		}
		if text := string(f.GetMessage()); strings.Contains(text, "recalled \"tone-") {
			recalled++
			if !strings.HasPrefix(text, `memory "" false`) || !strings.Contains(text, `-1" true`) {
				t.Errorf("a returning key's reply is %q, want its memory gone and its last tone before the expiry recalled", text)
			}
		}
	}
	if recalled != 8 || len(want[pipeline.DeadLettersName]) != 0 {
		t.Errorf("%d replies recalled a flushed tone, want 8; %d dead letters, want none", recalled, len(want[pipeline.DeadLettersName]))
	}
	// At the end of the input every key expires again: each store holds every key's last tone.
	for _, name := range []string{"stream.db", "batch.db"} {
		st := open(filepath.Join(dir, name))
		for _, key := range set.Keys {
			got, err := st.List(ctx, []byte(key), "history", "", 10)
			if err != nil {
				t.Fatal(err)
			}
			ref, err := driverStore.List(ctx, []byte(key), "history", "", 10)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, ref, func(a, b ltm.Entry) bool {
				return a.Key == b.Key && string(a.Value) == string(b.Value) && a.Seq == b.Seq
			}) || len(ref) != 1 {
				t.Errorf("%s: %s's long-term entries %+v, the driver's store %+v", name, key, got, ref)
			}
		}
	}
}
