package transforms

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/model/hosted"
)

func init() {
	register.DoFn8x0[context.Context, []byte, func(*[]byte) bool, func([]byte), func([]byte), func([]byte), func([]byte), func([]byte)](&runBatchFn{})
	register.Iter1[[]byte]()
}

// RunAgentBatchScope is the scope of the bounded fast path.
const RunAgentBatchScope = "RunAgentBatch"

// RunAgentBatch is the bounded fast path of RunAgent: it groups the keyed envelopes and
// restores (PCollection<KV<[]byte, []byte>>) by key and runs each key's whole input through
// the in-memory driver (package agent/drive) in one ordinary DoFn, with no state or timer
// calls. For a bounded input its outputs are RunAgent's, byte for byte (event-time ordering;
// Options.Ordering is ignored). It holds one key's input in memory at a time.
func RunAgentBatch(s beam.Scope, opts Options, keyed beam.PCollection) Outputs {
	s = s.Scope(RunAgentBatchScope)
	if opts.OrderResolutionMs <= 0 {
		opts.OrderResolutionMs = DefaultOrderMs
	}
	grouped := beam.GroupByKey(s, keyed)
	fn := &runBatchFn{Agent: opts.Agent, Config: opts.Config, Keyring: opts.Keyring, AllowUnsigned: opts.AllowUnsignedIntents,
		OrderResolutionMs: opts.OrderResolutionMs, Model: opts.Model}
	// One output per kind, in Outputs' order: emitting to it directly spares every output a
	// trip through a splitting step.
	return outputsOf(beam.ParDoN(s, fn, grouped))
}

type runBatchFn struct {
	Agent             string
	Config            []byte
	Keyring           string
	AllowUnsigned     bool
	OrderResolutionMs int64
	Model             hosted.Options

	rt     *runtime
	counts tally // the bundle's counts, added to the Beam counters when it finishes
}

func (f *runBatchFn) Setup() (err error) {
	f.rt, err = newRuntime(f.Agent, f.Config, f.Keyring, f.AllowUnsigned)
	if err == nil && f.Model.Hosted() {
		err = f.rt.useModel(f.Model)
	}
	return err
}

func (f *runBatchFn) ProcessElement(ctx context.Context, key []byte, values func(*[]byte) bool, intents, traces, finals, snapshots, dead func([]byte)) {
	var all [][]byte
	var v []byte
	for values(&v) {
		all = append(all, v)
	}
	// RunAgent's metrics but those of Beam state and timers, which the fast path has none
	// of; tallied over the bundle and added to the Beam counters once, in FinishBundle
	// (a Beam counter is per bundle: a failed bundle's counts are dropped with it).
	core, counts := f.rt.core(), f.counts
	core.Around = func(activate func() *agent.Result) *agent.Result { return f.rt.m.timed(ctx, activate) }
	d := drive.Driver{Core: core, OrderResolutionMs: f.OrderResolutionMs, OutputsOnly: true,
		Observe: func(r *agent.Result) { count(r, counts.add) }}
	st := d.Run(ctx, key, all, func(kind int64, b []byte) {
		if kind == outDeadLetter {
			counts.add("dead_letters", 1)
		}
		splitOutput(kind, b, intents, traces, finals, snapshots, dead)
	})
	counts.add("activations", int64(st.Activations))
	counts.add("model_calls", int64(st.ModelCalls))
}

// StartBundle and FinishBundle take the emitters of ProcessElement, as Beam requires; they
// emit nothing.
func (f *runBatchFn) StartBundle(_, _, _, _, _ func([]byte)) { f.counts = tally{} }

func (f *runBatchFn) FinishBundle(ctx context.Context, _, _, _, _, _ func([]byte)) {
	f.counts.flush(ctx)
}
