package transforms

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

func init() {
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []byte, func(int64, []byte), error](&runAgentFn{})
	register.Emitter2[int64, []byte]()
}

// Stable names: the --update contract of a RunAgent pipeline (see the package documentation).
const (
	StateCellID    = "agent_state.v1"  // the combined state cell (AgentStateCells)
	OrderBufferID  = "order_buffer.v1" // envelopes waiting for the watermark (EventTimeOrder)
	TimerFamilyID  = "agent.v1"        // the one timer family; tags: deadline, ttl, order:<ms>
	RunAgentScope  = "RunAgent"        // scope of the stateful step
	DefaultOrderMs = int64(1000)       // default event-time ordering resolution
)

// Options configure RunAgent.
type Options struct {
	// Agent is the registered agent to run (agent.Register); Config is passed to its factory.
	Agent  string
	Config []byte
	// Keyring is the reference (env:VAR or file:PATH) of the keyring that signs intents,
	// loaded on each worker at setup; empty means intents cannot be signed.
	Keyring string
	// Ordering is EventTimeOrder (the default) or ArrivalOrder; OrderResolutionMs is the
	// event-time ordering resolution, default DefaultOrderMs.
	Ordering          Ordering
	OrderResolutionMs int64
}

// Outputs are RunAgent's outputs, each a PCollection<[]byte> of deterministically serialized
// messages: ToolIntent, TraceEvent, FinalReply, StateSnapshot, ActivationErrorRecord.
type Outputs struct {
	Intents, Traces, Finals, Snapshots, DeadLetters beam.PCollection
}

// RunAgent runs the registered agent over keyed envelopes (PCollection<KV<[]byte, []byte>>,
// the output of DecodeEnvelopes): one stateful step keyed by entity key.
func RunAgent(s beam.Scope, opts Options, keyed beam.PCollection) Outputs {
	s = s.Scope(RunAgentScope)
	requirePrismNoSplit()
	if opts.Ordering == "" {
		opts.Ordering = EventTimeOrder
	}
	if opts.OrderResolutionMs <= 0 {
		opts.OrderResolutionMs = DefaultOrderMs
	}
	return splitOutputs(s, beam.ParDo(s, newRunAgentFn(opts), keyed))
}

func newRunAgentFn(o Options) *runAgentFn {
	return &runAgentFn{
		Agent: o.Agent, Config: o.Config, Keyring: o.Keyring,
		Ordering: o.Ordering, OrderResolutionMs: o.OrderResolutionMs,
		State:  state.MakeValueState[[]byte](StateCellID),
		Buffer: state.MakeBagState[[]byte](OrderBufferID),
		Timer:  timers.InEventTime(TimerFamilyID),
	}
}

// runAgentFn is the stateful DoFn. It reads the key's cells, calls the activation core, writes
// the cells that changed, sets the timers and emits the outputs, tagged by kind.
type runAgentFn struct {
	Agent             string
	Config            []byte
	Keyring           string
	Ordering          Ordering
	OrderResolutionMs int64

	State  state.Value[[]byte]
	Buffer state.Bag[[]byte]
	Timer  timers.EventTime

	rt *runtime
}

func (f *runAgentFn) Setup() error {
	rt, err := newRuntime(f.Agent, f.Config, f.Keyring)
	f.rt = rt
	return err
}

func (f *runAgentFn) frame() *frame {
	return &frame{layout: &combined{cell: &f.State}, buffer: &f.Buffer, timer: f.Timer,
		ordering: f.Ordering, resolution: f.OrderResolutionMs}
}

func (f *runAgentFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, env []byte, emit func(int64, []byte)) error {
	return f.rt.element(ctx, f.frame(), ts, sp, tp, key, env, emit)
}

func (f *runAgentFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit func(int64, []byte)) error {
	return f.rt.fire(ctx, f.frame(), ts, sp, tp, key, t, emit)
}

// frame binds a DoFn's state, timer and ordering settings for one call.
type frame struct {
	layout     layout
	buffer     *state.Bag[[]byte]
	timer      timers.EventTime
	ordering   Ordering
	resolution int64
}

// runtime is what a DoFn instance builds at setup: the agent, its dependencies, counters.
type runtime struct {
	agent *agent.Agent
	deps  agent.Deps

	activations, firings, modelCalls           beam.Counter
	stateReads, stateWrites, stateBytesWritten beam.Counter
	deadLetters                                beam.Counter
}

func newRuntime(name string, config []byte, keyringRef string) (*runtime, error) {
	a, err := agent.Build(name, config)
	if err != nil {
		return nil, err
	}
	rt := &runtime{agent: a}
	if keyringRef != "" {
		if rt.deps.Keyring, err = intent.LoadKeyring(keyringRef); err != nil {
			return nil, err
		}
	}
	c := func(n string) beam.Counter { return beam.NewCounter("beamagents", n) }
	rt.activations, rt.firings, rt.modelCalls = c("activations"), c("timer_firings"), c("model_calls")
	rt.stateReads, rt.stateWrites, rt.stateBytesWritten = c("state_reads"), c("state_writes"), c("state_bytes_written")
	rt.deadLetters = c("dead_letters")
	return rt, nil
}

func (rt *runtime) element(ctx context.Context, fr *frame, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, raw []byte, emit func(int64, []byte)) error {
	now := mtime.Time(ts).Milliseconds()
	in := drive.DecodeInput(key, raw)
	switch {
	case in.Dead != nil:
		rt.deadLetters.Inc(ctx, 1)
		emit(OutDeadLetter, drive.Marshal(in.Dead))
		return nil
	case in.Snapshot != nil:
		return rt.restore(ctx, fr, sp, tp, in.Snapshot, now, emit)
	case fr.ordering == ArrivalOrder:
		return rt.arrival(ctx, fr, sp, tp, key, now, in.Env, "", emit)
	}
	if err := fr.buffer.Add(sp, drive.AppendFrame(nil, in.Env.GetEventTimeMs(), raw)); err != nil {
		return err
	}
	rt.stateWrites.Inc(ctx, 1)
	b := drive.Bucket(in.Env.GetEventTimeMs(), fr.resolution)
	fr.timer.Set(tp, toTime(max(b, now)), timers.WithTag(drive.OrderTag(b)))
	return nil
}

// fire is one firing of the key's timer (any tag) with event-time ordering: the buffered
// envelopes due by then and the core timers due by then, in event time (drive.Core.Firing).
// The core timers live in the ordering buffer beside the envelopes; the Beam timers only wake
// the key, so a Beam timer that fires after the core moved it changes nothing.
func (rt *runtime) fire(ctx context.Context, fr *frame, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit func(int64, []byte)) error {
	at := mtime.Time(ts).Milliseconds()
	rt.firings.Inc(ctx, 1)
	if fr.ordering == ArrivalOrder {
		if t.Tag != agent.TagDeadline && t.Tag != agent.TagTTL {
			return nil
		}
		return rt.arrival(ctx, fr, sp, tp, key, at, nil, t.Tag, emit)
	}
	raw, _, err := fr.buffer.Read(sp)
	if err != nil {
		return err
	}
	rt.stateReads.Inc(ctx, 1)
	due, rest, coreTimers, bad := drive.Split(raw, at)
	if bad > 0 {
		rt.deadLetters.Inc(ctx, 1)
		emit(OutDeadLetter, drive.Marshal(drive.CorruptBuffer(key, bad)))
	}
	cleared := map[string]bool{t.Tag: true}
	for _, d := range due {
		// The due envelopes' own ordering timers would find nothing left to do.
		if tag := drive.OrderTag(drive.Bucket(d.Env.GetEventTimeMs(), fr.resolution)); !cleared[tag] {
			cleared[tag] = true
			fr.timer.ClearTag(tp, tag)
		}
	}
	before := coreTimers.Clone()
	st := newStore(sp, fr.layout)
	rt.core().Firing(ctx, firingState{st}, key, due, coreTimers, at, func(res *agent.Result) { rt.emit(ctx, res, emit) })
	rt.activations.Inc(ctx, int64(len(due)))
	if err := rt.flush(ctx, fr, st); err != nil {
		return err
	}
	ops := drive.Changes(before, coreTimers)
	if len(due) > 0 || bad > 0 || len(ops) > 0 {
		if err := rt.rebuffer(ctx, fr, sp, drive.AppendTimers(rest, coreTimers)); err != nil {
			return err
		}
	}
	setTimers(fr, tp, ops, at)
	return nil
}

func (rt *runtime) core() drive.Core { return drive.Core{Agent: rt.agent, Deps: rt.deps} }

// firingState is the store of one firing as the driver's State.
type firingState struct{ *store }

func (s firingState) Apply(r *agent.Result) { s.apply(r) }

// rebuffer replaces the buffer by what is left: the envelopes not yet due and the armed core
// timers, packed as one element.
func (rt *runtime) rebuffer(ctx context.Context, fr *frame, sp state.Provider, rest []byte) error {
	if err := fr.buffer.Clear(sp); err != nil {
		return err
	}
	rt.stateWrites.Inc(ctx, 1)
	if len(rest) == 0 {
		return nil
	}
	rt.stateWrites.Inc(ctx, 1)
	return fr.buffer.Add(sp, rest)
}

// restore applies a state restore immediately: restores precede the key's envelopes, which
// wait in the ordering buffer. A restored suspension's deadline joins the buffer's timers.
func (rt *runtime) restore(ctx context.Context, fr *frame, sp state.Provider, tp timers.Provider, snap *pb.StateSnapshot, now int64, emit func(int64, []byte)) error {
	st := newStore(sp, fr.layout)
	coreTimers := drive.Timers{}
	var res *agent.Result
	rt.core().Restore(ctx, firingState{st}, snap, coreTimers, func(r *agent.Result) { res = r; rt.emit(ctx, r, emit) })
	if err := rt.flush(ctx, fr, st); err != nil {
		return err
	}
	if fr.ordering == ArrivalOrder {
		setTimers(fr, tp, res.Timers, now)
		return nil
	}
	if len(coreTimers) > 0 {
		if err := fr.buffer.Add(sp, drive.AppendTimers(nil, coreTimers)); err != nil {
			return err
		}
		rt.stateWrites.Inc(ctx, 1)
	}
	setTimers(fr, tp, drive.Changes(nil, coreTimers), now)
	return nil
}

// arrival runs one envelope, or one firing of a core timer, as it arrives (ArrivalOrder).
func (rt *runtime) arrival(ctx context.Context, fr *frame, sp state.Provider, tp timers.Provider, key []byte, now int64, env *pb.AgentEnvelope, firing string, emit func(int64, []byte)) error {
	st := newStore(sp, fr.layout)
	var res *agent.Result
	if env != nil {
		res, _ = rt.agent.Activate(ctx, st, env, rt.deps) // a failure is a dead letter in res
		rt.activations.Inc(ctx, 1)
	} else {
		res, _ = rt.agent.Fire(ctx, st, key, firing, now, rt.deps)
	}
	st.apply(res)
	rt.emit(ctx, res, emit)
	if err := rt.flush(ctx, fr, st); err != nil {
		return err
	}
	setTimers(fr, tp, res.Timers, now)
	return nil
}

// flush writes the state the firing changed (already applied to st) once.
func (rt *runtime) flush(ctx context.Context, fr *frame, st *store) error {
	writes, n, err := st.flush()
	if err != nil {
		return fmt.Errorf("committing state: %w", err)
	}
	rt.stateReads.Inc(ctx, int64(fr.layout.reads()))
	rt.stateWrites.Inc(ctx, int64(writes))
	rt.stateBytesWritten.Inc(ctx, int64(n))
	return nil
}

// setTimers applies timer operations (the last per tag wins), never earlier than now.
func setTimers(fr *frame, tp timers.Provider, ops []agent.TimerOp, now int64) {
	last := map[string]agent.TimerOp{}
	for _, op := range ops {
		last[op.Tag] = op
	}
	for _, tag := range slices.Sorted(maps.Keys(last)) {
		if op := last[tag]; op.Set {
			fr.timer.Set(tp, toTime(max(op.AtMs, now)), timers.WithTag(tag))
		} else {
			fr.timer.ClearTag(tp, tag)
		}
	}
}

// Output kinds of the stateful step's single output.
const (
	OutIntent     = drive.OutIntent
	OutTrace      = drive.OutTrace
	OutFinal      = drive.OutFinal
	OutSnapshot   = drive.OutSnapshot
	OutDeadLetter = drive.OutDeadLetter
)

func (rt *runtime) emit(ctx context.Context, res *agent.Result, emit func(int64, []byte)) {
	rt.modelCalls.Inc(ctx, int64(res.ModelCalls))
	rt.deadLetters.Inc(ctx, int64(len(res.DeadLetters)))
	drive.Emit(res, emit)
}

func toTime(ms int64) time.Time { return mtime.Time(ms).ToTime() }
