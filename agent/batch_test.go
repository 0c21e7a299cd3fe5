package agent_test

import (
	"bytes"
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// countingStore counts the reads of each cell.
type countingStore struct {
	host.MapStore
	reads map[statecodec.Cell]int
}

func (s *countingStore) Read(c statecodec.Cell) ([]byte, error) {
	s.reads[c]++
	return s.MapStore.Read(c)
}

// A batch of every input of a scenario decides exactly what the inputs decide one by one,
// each committed before the next: the same outputs, the same final state (Writes), the last
// timer operation per tag (Timers); and it reads each cell from the store at most once. So
// does a batch that defers encoding (its inputs' results then carry no writes): the decoded
// memory and cache it keeps between inputs are the committed state, whatever failed.
func TestBatchMatchesInputByInput(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.json"))
	for _, path := range paths {
		for _, deferred := range []bool{false, true} {
			name := strings.TrimSuffix(filepath.Base(path), ".json")
			if deferred {
				name += "/deferred"
			}
			t.Run(name, func(t *testing.T) { batchMatchesInputByInput(t, path, deferred) })
		}
	}
}

func batchMatchesInputByInput(t *testing.T, path string, deferred bool) {
	sc := loadScenario(t, path)
	deps := host.Deps{Keyring: testKeyring(t)}
	if sc.NoKeyring {
		deps.Keyring = nil
	}

	one := newTestAgentWith(t, sc.script(t), sc)
	st := sc.store(t)
	var want bytes.Buffer
	wantTimers := map[string]host.TimerOp{}
	for _, in := range sc.Inputs {
		res := step(t, host.NewBatch(one, st, deps), in)
		want.Write(marshalOutputs(t, res))
		for _, op := range res.Timers {
			wantTimers[op.Tag] = op
		}
		st.Apply(res)
	}

	all := newTestAgentWith(t, sc.script(t), sc)
	cs := &countingStore{MapStore: sc.store(t), reads: map[statecodec.Cell]int{}}
	b := host.NewBatch(all, cs, deps)
	if deferred {
		b.DeferEncoding()
	}
	var got bytes.Buffer
	for _, in := range sc.Inputs {
		res := step(t, b, in)
		if deferred && res.Writes != nil {
			t.Fatalf("a result of a batch that defers encoding carries writes %v", slices.Collect(maps.Keys(res.Writes)))
		}
		got.Write(marshalOutputs(t, res))
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Error("the batch's outputs differ from the inputs run one by one")
	}
	final := maps.Clone(cs.MapStore)
	final.Apply(&host.Result{Writes: b.Writes()})
	if !maps.EqualFunc(final, st, bytes.Equal) {
		t.Errorf("final state: batch %v, one by one %v", slices.Sorted(maps.Keys(final)), slices.Sorted(maps.Keys(st)))
	}
	var timers []host.TimerOp
	for _, tag := range slices.Sorted(maps.Keys(wantTimers)) {
		timers = append(timers, wantTimers[tag])
	}
	if !slices.Equal(b.Timers(), timers) {
		t.Errorf("timers %v, want %v", b.Timers(), timers)
	}
	for c, n := range cs.reads {
		if n > 1 {
			t.Errorf("cell %s read %d times", c, n)
		}
	}
}

func step(t *testing.T, b host.Batch, in input) *host.Result {
	t.Helper()
	ctx := context.Background()
	var res *host.Result
	switch {
	case in.Envelope != nil:
		env := &pb.AgentEnvelope{}
		if err := protojson.Unmarshal(in.Envelope, env); err != nil {
			t.Fatal(err)
		}
		res, _ = b.Activate(ctx, env)
	case in.Restore != nil:
		snap := &pb.StateSnapshot{}
		if err := protojson.Unmarshal(in.Restore, snap); err != nil {
			t.Fatal(err)
		}
		res, _ = b.Restore(ctx, snap)
	case in.Timer != nil:
		res, _ = b.Fire(ctx, []byte(entity), in.Timer.Tag, in.Timer.AtMs)
	}
	return res
}
