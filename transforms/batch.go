package transforms

import (
	"context"
	"fmt"
	goruntime "runtime"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/internal/inorder"
	"github.com/beamagents/beamagents/internal/keysched"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register.DoFn9x1[context.Context, beam.EventTime, []byte, func(*[]byte) bool, emit, emit, emit, emit, emit, error](&runBatchFn{})
	register.Emitter2[beam.EventTime, []byte]()
	register.Iter1[[]byte]()
}

// emit emits one output with the timestamp of the key's grouped input, which RunAgentBatch
// states explicitly because a key's outputs may be emitted during a later key's call.
type emit = func(beam.EventTime, []byte)

// RunAgentBatchScope is the scope of the bounded fast path.
const RunAgentBatchScope = "RunAgentBatch"

// RunAgentBatch is the bounded fast path of RunAgent: it groups the keyed envelopes and
// restores (PCollection<KV<[]byte, []byte>>) by key and runs each key's whole input through
// the in-memory driver (package agent/drive) in one ordinary DoFn, with no state or timer
// calls. For a bounded input its outputs are RunAgent's, byte for byte (event-time ordering;
// Options.Ordering is ignored).
//
// Keys of a bundle run Options.BatchWorkers at a time (by default as many as the worker has
// cores), small keys gathered in groups of about 256 envelopes; each key's outputs are
// emitted whole and in order, with its grouped input's timestamp, from the bundle's own
// goroutine. It holds the inputs of the groups running at once, and at most about 16,384 of
// each group's outputs not yet emitted (a group that has more waits until the groups before
// it are emitted). With Options.ModelConcurrency above 1 (a model that makes its callers
// wait) every key is a group of its own and up to that many groups of the step run at once
// in the process. An input not in the global window runs one key at a time, each key's
// outputs emitted during its own call. It panics when opts do not pass Options.Check.
func RunAgentBatch(s beam.Scope, opts Options, keyed beam.PCollection) Outputs {
	out, err := TryRunAgentBatch(s, opts, keyed)
	if err != nil {
		panic(err)
	}
	return out
}

// TryRunAgentBatch is RunAgentBatch, returning an error when opts do not pass Options.Check.
func TryRunAgentBatch(s beam.Scope, opts Options, keyed beam.PCollection) (Outputs, error) {
	s = s.Scope(RunAgentBatchScope)
	if err := opts.Check(); err != nil {
		return Outputs{}, fmt.Errorf("RunAgentBatch: %w", err)
	}
	opts = opts.withDefaults()
	if keyed.WindowingStrategy().Fn.Kind != window.GlobalWindows {
		opts.BatchWorkers = 1
	}
	// A tenant's budget admits the entity's events before they are spread over its sub-keys.
	keyed, err := admitTenants(s, opts, keyed, true)
	if err == nil {
		keyed, err = shardKeyed(s, opts, keyed)
	}
	if err != nil {
		return Outputs{}, fmt.Errorf("RunAgentBatch: %w", err)
	}
	grouped := beam.GroupByKey(s, keyed)
	opts.ModelConcurrency = opts.concurrency()
	fn := &runBatchFn{Options: opts, Instance: newInstanceID()}
	// One output per kind, in Outputs' order: emitting to it directly spares every output a
	// trip through a splitting step.
	return outputsOf(beam.ParDoN(s, fn, grouped)), nil
}

type runBatchFn struct {
	// Options are RunAgentBatch's, with their defaults and ModelConcurrency resolved: with a
	// ModelConcurrency above 1, every key is a group of its own and up to that many groups of
	// the step run at once in the process (the same gate as RunAgent's steps run apart),
	// however many bundles run; a bundle keeps twice that many groups started and not yet
	// emitted.
	Options  Options
	Instance string

	rt      *runtime
	gate    *jobTable // when ModelConcurrency > 1
	workers int
	groupN0 int                          // groupEnvelopes, or 1 with ModelConcurrency > 1
	counts  tally                        // the bundle's counts, added to the Beam counters when it finishes
	groups  *inorder.Runner[batchOutput] // the bundle's running groups of keys (workers > 1)
	group   []keyInput                   // keys gathered for the next group
	groupN  int                          // their envelopes
}

// keyInput is one key's grouped input.
type keyInput struct {
	ts     beam.EventTime
	key    []byte
	values [][]byte
}

// batchOutput is one output of a key, or, when stats is set, what a group's keys add to
// the bundle's metrics.
type batchOutput struct {
	ts    beam.EventTime
	kind  int64
	b     []byte
	stats *groupStats
}

// groupStats are a group's counts and activation latencies, kept apart from the bundle's
// until they reach its goroutine: a Beam metric may only be updated there.
type groupStats struct {
	counts    tally
	latencies []int64 // µs
}

const (
	// groupEnvelopes is the size from which gathered keys run as a group: large enough that
	// handing a group to another goroutine costs little against running it.
	groupEnvelopes = 256
	// groupBuffer bounds a group's outputs not yet emitted.
	groupBuffer = 16384
)

func (f *runBatchFn) Setup() (err error) {
	if f.rt, err = newRuntime(f.Options); err != nil {
		return err
	}
	if f.workers = f.Options.BatchWorkers; f.workers <= 0 {
		f.workers = goruntime.GOMAXPROCS(0)
	}
	f.groupN0 = groupEnvelopes
	if n := f.Options.ModelConcurrency; n > 1 {
		if f.gate, err = keysched.Acquire[stepData](f.Instance, n); err != nil {
			return err
		}
		// Twice as many groups as slots: a group that finished waits to be emitted after the
		// ones before it, and must not keep the next from taking its slot.
		f.workers, f.groupN0 = max(f.workers, 2*n), 1
	}
	return nil
}

func (f *runBatchFn) StartBundle(_, _, _, _, _ emit) {
	f.stopGroups() // a bundle that failed before FinishBundle
	f.counts = tally{}
	if f.workers > 1 {
		f.groups = inorder.New[batchOutput](f.workers, groupBuffer)
	}
}

func (f *runBatchFn) ProcessElement(ctx context.Context, ts beam.EventTime, key []byte, values func(*[]byte) bool, intents, traces, finals, snapshots, dead emit) error {
	in := keyInput{ts: ts, key: key}
	var v []byte
	for values(&v) {
		in.values = append(in.values, v)
	}
	e := emitters{intents, traces, finals, snapshots, dead}
	if f.groups == nil {
		timed := func(activate func() *host.Result) *host.Result { return f.rt.m.timed(ctx, activate) }
		f.runKeys(ctx, []keyInput{in}, f.counts, timed, func(o batchOutput) bool { e.emit(o); return true })
		return nil
	}
	f.group = append(f.group, in)
	if f.groupN += len(in.values); f.groupN < f.groupN0 {
		return f.groups.Poll(f.deliver(ctx, e))
	}
	return f.startGroup(ctx, e)
}

// startGroup runs the gathered keys as one group.
func (f *runBatchFn) startGroup(ctx context.Context, e emitters) error {
	group := f.group
	f.group, f.groupN = nil, 0
	return f.groups.Go(func(yield func(batchOutput) bool) {
		st := &groupStats{counts: tally{}}
		clock := func(activate func() *host.Result) *host.Result {
			res, us := clocked(activate)
			st.latencies = append(st.latencies, us)
			return res
		}
		f.gate.Hold(func() { f.runKeys(ctx, group, st.counts, clock, yield) })
		yield(batchOutput{stats: st})
	}, f.deliver(ctx, e))
}

// runKeys runs each key's input through the driver, each activation through around,
// yielding the outputs and adding to counts RunAgent's metrics but those of Beam state and
// timers, which the fast path has none of. Once yield refuses an output (the bundle has
// failed), the key running goes on without yielding and no later key runs.
func (f *runBatchFn) runKeys(ctx context.Context, keys []keyInput, counts tally, around func(func() *host.Result) *host.Result, yield func(batchOutput) bool) {
	core := f.rt.core(nil)
	core.Around, core.OrderResolutionMs = around, f.Options.OrderResolutionMs
	d := drive.Driver{Core: core, OutputsOnly: true,
		Observe: func(r *host.Result) { count(r, counts.add) }}
	ok := true
	for _, in := range keys {
		st := d.Run(ctx, in.key, in.values, func(kind int64, b []byte) {
			if kind == records.OutDeadLetter {
				counts.add("dead_letters", 1)
			}
			ok = ok && yield(batchOutput{ts: in.ts, kind: kind, b: b})
		})
		if !ok {
			return
		}
		counts.add("activations", int64(st.Activations))
		counts.add("model_calls", int64(st.ModelCalls))
	}
}

// deliver emits a group's output, or adds its stats to the bundle's metrics.
func (f *runBatchFn) deliver(ctx context.Context, e emitters) func(batchOutput) {
	return func(o batchOutput) {
		if o.stats == nil {
			e.emit(o)
			return
		}
		for name, n := range o.stats.counts {
			f.counts[name] += n // noted in the process's status when the group counted it
		}
		for _, us := range o.stats.latencies {
			f.rt.m.latency.Update(ctx, us)
		}
	}
}

// FinishBundle emits what the bundle's groups have not, and adds the bundle's counts to the
// Beam counters (a Beam counter is per bundle: a failed bundle's counts are dropped with it).
func (f *runBatchFn) FinishBundle(ctx context.Context, intents, traces, finals, snapshots, dead emit) error {
	if f.groups != nil {
		e := emitters{intents, traces, finals, snapshots, dead}
		if len(f.group) > 0 {
			if err := f.startGroup(ctx, e); err != nil {
				return err
			}
		}
		if err := f.groups.Wait(f.deliver(ctx, e)); err != nil {
			return err
		}
		f.groups = nil
	}
	f.counts.flush(ctx)
	return nil
}

func (f *runBatchFn) Teardown() {
	f.stopGroups()
	f.gate.Release()
	f.gate = nil
	f.rt.close()
}

func (f *runBatchFn) stopGroups() {
	if f.groups != nil {
		f.groups.Stop()
		f.groups, f.group, f.groupN = nil, nil, 0
	}
}

// emitters are the fast path's outputs, in Outputs' order.
type emitters struct{ intents, traces, finals, snapshots, dead emit }

func (e emitters) emit(o batchOutput) {
	outputOf(o.kind, e.intents, e.traces, e.finals, e.snapshots, e.dead)(o.ts, o.b)
}
