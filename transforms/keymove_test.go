package transforms

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/keysched"
	"github.com/beamagents/beamagents/statedir"
)

// TestKeyMovesWhileItsStepRuns holds RunAgent to what it assumes of a runner that moves keys
// between workers (Dataflow): a key's Beam state and timers move with it, the jobs table of a
// worker's process does not (package internal/keysched). A key's step starts apart from its
// bundle on worker A and is still running when the key moves to worker B (another DoFn
// instance, another table): B's call finds no job and runs the step again from the
// committed state. When the key comes back to A, A's finished job no longer matches the
// state and is dropped. The outputs are the in-memory driver's, each once.
func TestKeyMovesWhileItsStepRuns(t *testing.T) {
	const key = "k-1"
	cfg := scriptConfig(t, key, "first answer", "second answer")
	opts := Options{Agent: support.Name, Config: cfg, AllowUnsignedIntents: true, ModelConcurrency: 2}.withDefaults()
	first, second := marshalEnv(t, key, t0, "where is my order?"), marshalEnv(t, key, t0+5000, "and now?")

	r := &fakeRunner{key: []byte(key), timers: map[string]int64{}}
	a, b := r.worker(t, opts), r.worker(t, opts)
	defer a.Teardown()
	defer b.Teardown()

	// Worker A starts the first envelope's step; the step cannot get a slot, so it is still
	// running when the key moves.
	r.element(t, a, first, t0)
	release := holdSlots(t, a.Instance, 2)
	r.fire(t, a, drive.OrderTag(t0))
	running := a.jobs.Get(r.key)
	if running == nil {
		t.Fatal("worker A started no job")
	}
	if len(r.out) != 0 {
		t.Fatalf("outputs before the step's effects were carried out: %d", len(r.out))
	}

	// The key moves to B: its await timer fires there; B knows no job and runs the step.
	r.drain(t, b)
	if len(r.out) == 0 {
		t.Fatal("worker B carried nothing out")
	}

	if b.jobs.Len() != 0 {
		t.Errorf("worker B kept %d jobs after carrying them out", b.jobs.Len())
	}

	// A's job finishes (it decided the same outputs B carried out); the key comes back to A
	// with B's state.
	close(release)
	<-running.Done()
	if running.Err != nil || len(running.Data.eff.Outputs) == 0 {
		t.Fatalf("worker A's job: %d outputs, err %v", len(running.Data.eff.Outputs), running.Err)
	}
	r.element(t, a, second, t0+5000)
	if a.jobs.Get(r.key) != nil {
		t.Error("worker A kept its stale job")
	}
	r.drain(t, a)

	want := driverOutputs(t, opts, key, first, second)
	if len(r.out) != len(want) {
		t.Fatalf("%d outputs, want the driver's %d", len(r.out), len(want))
	}
	for i := range want {
		if r.out[i].Kind != want[i].Kind || !bytes.Equal(r.out[i].Bytes, want[i].Bytes) {
			t.Errorf("output %d differs from the driver's (kind %d, want %d)", i, r.out[i].Kind, want[i].Kind)
		}
	}
}

// holdSlots takes n slots of the jobs table of the step instance, until release is closed.
func holdSlots(t *testing.T, instance string, n int) chan struct{} {
	t.Helper()
	tb, err := keysched.Acquire[stepData](instance, n)
	if err != nil {
		t.Fatal(err)
	}
	release, held := make(chan struct{}), make(chan struct{})
	for range n {
		go tb.Hold(func() { held <- struct{}{}; <-release })
		<-held
	}
	t.Cleanup(tb.Release)
	return release
}

func driverOutputs(t *testing.T, opts Options, key string, values ...[]byte) []drive.Output {
	t.Helper()
	rt, err := newRuntime(opts)
	if err != nil {
		t.Fatal(err)
	}
	core := rt.core(&frame{resolution: opts.OrderResolutionMs, ordering: opts.Ordering})
	d := drive.Driver{Core: core}
	var out []drive.Output
	d.Run(context.Background(), []byte(key), values, func(kind int64, b []byte) { out = append(out, drive.Output{Kind: kind, Bytes: b}) })
	return out
}

func marshalEnv(t *testing.T, key string, at int64, text string) []byte {
	t.Helper()
	b, err := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const t0 = int64(1767225600000)

// scriptConfig is the support agent's config with a model script replying texts to key's
// activations in turn.
func scriptConfig(t *testing.T, key string, texts ...string) []byte {
	t.Helper()
	s, err := support.Schema()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for seq, text := range texts {
		value := fmt.Sprintf(`{"case":"support.reply","fields":{"support.reply.text":%q}}`, text)
		doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`, interaction.ValueFormat, s.RootTypeID(), s.Digest(), value)
		fmt.Fprintf(&b, "{\"entity\":%q,\"seq\":%d,\"step\":0,\"response_text\":%q}\n", key, seq, doc)
	}
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return []byte(fmt.Sprintf(`{"script":%q}`, p))
}

// fakeRunner holds one key's Beam state and timers, as a runner that moves the key between
// workers keeps them, and calls the workers' DoFn instances, each call a bundle of its own
// committed at once.
type fakeRunner struct {
	key    []byte
	cell   []byte
	bag    [][]byte
	timers map[string]int64 // tag → firing time
	out    []drive.Output
}

func (r *fakeRunner) worker(t *testing.T, o Options) *runAgentFn {
	t.Helper()
	f := newRunAgentFn(o)
	if err := f.Setup(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (r *fakeRunner) emit(_ beam.EventTime, kind int64, b []byte) {
	r.out = append(r.out, drive.Output{Kind: kind, Bytes: b})
}

func (r *fakeRunner) element(t *testing.T, f *runAgentFn, v []byte, at int64) {
	t.Helper()
	f.StartBundle(context.Background(), r.emit)
	if err := f.ProcessElement(context.Background(), mtime.FromMilliseconds(at), fakeState{r: r}, (*fakeTimers)(r), r.key, v, r.emit); err != nil {
		t.Fatal(err)
	}
}

func (r *fakeRunner) fire(t *testing.T, f *runAgentFn, tag string) {
	t.Helper()
	at, ok := r.timers[tag]
	if !ok {
		t.Fatalf("no timer %q armed (%v)", tag, r.timers)
	}
	delete(r.timers, tag)
	f.StartBundle(context.Background(), r.emit)
	tc := timers.Context{Family: TimerFamilyID, Tag: tag}
	if err := f.OnTimer(context.Background(), mtime.FromMilliseconds(at), fakeState{r: r}, (*fakeTimers)(r), r.key, tc, r.emit); err != nil {
		t.Fatal(err)
	}
}

// drain fires the key's timers on f, earliest first (ties by tag), until none is armed.
func (r *fakeRunner) drain(t *testing.T, f *runAgentFn) {
	t.Helper()
	for n := 0; len(r.timers) > 0; n++ {
		if n > 100 {
			t.Fatalf("timers keep firing: %v", r.timers)
		}
		tags := slices.Sorted(func(yield func(string) bool) {
			for tag := range r.timers {
				if !yield(tag) {
					return
				}
			}
		})
		next := tags[0]
		for _, tag := range tags {
			if r.timers[tag] < r.timers[next] {
				next = tag
			}
		}
		r.fire(t, f, next)
	}
}

type fakeTimers fakeRunner

func (p *fakeTimers) Set(m timers.TimerMap) {
	if m.Clear {
		delete(p.timers, m.Tag)
		return
	}
	p.timers[m.Tag] = m.FireTimestamp.Milliseconds()
}

// fakeState is the key's state as a state.Provider; writes are committed at once.
type fakeState struct {
	state.Provider // the kinds of state RunAgent does not use
	r              *fakeRunner
}

func (p fakeState) ReadValueState(string) (any, []state.Transaction, error) {
	if p.r.cell == nil {
		return nil, nil, nil
	}
	return p.r.cell, nil, nil
}

func (p fakeState) WriteValueState(tx state.Transaction) error {
	p.r.cell = tx.Val.([]byte)
	return nil
}

func (p fakeState) ClearValueState(state.Transaction) error {
	p.r.cell = nil
	return nil
}

func (p fakeState) ReadBagState(string) ([]any, []state.Transaction, error) {
	out := make([]any, len(p.r.bag))
	for i, e := range p.r.bag {
		out[i] = e
	}
	return out, nil, nil
}

func (p fakeState) WriteBagState(tx state.Transaction) error {
	p.r.bag = append(p.r.bag, tx.Val.([]byte))
	return nil
}

func (p fakeState) ClearBagState(state.Transaction) error {
	p.r.bag = nil
	return nil
}

// TestFrozenFiringSettlesItsStep: once a run's Capture is frozen (run --state_dir's drain), a
// firing of a key whose step runs apart carries the step's effects out first and then records
// the key as the step left it, running nothing more.
func TestFrozenFiringSettlesItsStep(t *testing.T) {
	const key = "k-1"
	capture := statedir.NewCapture()
	defer capture.Close()
	opts := Options{Agent: support.Name, Config: scriptConfig(t, key, "first answer"), AllowUnsignedIntents: true,
		ModelConcurrency: 2, Capture: capture.ID()}.withDefaults()
	r := &fakeRunner{key: []byte(key), timers: map[string]int64{}}
	w := r.worker(t, opts)
	defer w.Teardown()

	r.element(t, w, marshalEnv(t, key, t0, "where is my order?"), t0)
	r.fire(t, w, drive.OrderTag(t0))
	if w.jobs.Get(r.key) == nil {
		t.Fatal("no step started")
	}
	capture.Freeze()
	r.drain(t, w)
	if w.jobs.Get(r.key) != nil || len(r.out) == 0 {
		t.Fatalf("the frozen firing left the step (%d outputs)", len(r.out))
	}
	if capture.Len() != 1 {
		t.Fatalf("%d keys recorded, want 1", capture.Len())
	}
	want := driverOutputs(t, Options{Agent: opts.Agent, Config: opts.Config, AllowUnsignedIntents: true}.withDefaults(), key, marshalEnv(t, key, t0, "where is my order?"))
	for _, o := range r.out {
		if !slices.ContainsFunc(want, func(w drive.Output) bool { return w.Kind == o.Kind && bytes.Equal(w.Bytes, o.Bytes) }) {
			t.Errorf("an output of kind %d the driver does not emit", o.Kind)
		}
	}
}
