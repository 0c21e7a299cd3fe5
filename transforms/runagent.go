package transforms

import (
	"context"
	"fmt"
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
	"github.com/beamagents/beamagents/model/hosted"
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
	// AllowUnsignedIntents emits intents unsigned when there is no Keyring (agent.Deps).
	AllowUnsignedIntents bool
	// VerifyResults is how tool results and approvals are verified against Keyring: "off"
	// (or empty), "permissive" or "require" (intent.ParseMode; agent.Deps.VerifyResults).
	VerifyResults string

	// BatchWorkers is how many groups of keys of a bundle RunAgentBatch runs at once: 0 means
	// as many as the worker has cores (GOMAXPROCS), 1 one key after another. RunAgent ignores it.
	BatchWorkers int

	// Model, when it names a hosted provider, replaces the agent's model (unless the agent
	// pins its own); the provider and its key are created on each worker at setup.
	Model hosted.Options
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
		Agent: o.Agent, Config: o.Config, Keyring: o.Keyring, AllowUnsigned: o.AllowUnsignedIntents, VerifyResults: o.VerifyResults,
		Ordering: o.Ordering, OrderResolutionMs: o.OrderResolutionMs, Model: o.Model,
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
	AllowUnsigned     bool
	VerifyResults     string
	Ordering          Ordering
	OrderResolutionMs int64
	Model             hosted.Options

	State  state.Value[[]byte]
	Buffer state.Bag[[]byte]
	Timer  timers.EventTime

	rt *runtime
}

func (f *runAgentFn) Setup() error {
	rt, err := newRuntime(f.Agent, f.Config, f.Keyring, f.AllowUnsigned, f.VerifyResults)
	if err == nil && f.Model.Hosted() {
		err = rt.useModel(f.Model)
	}
	f.rt = rt
	return err
}

func (f *runAgentFn) frame() *frame {
	return &frame{rt: f.rt, layout: &combined{cell: &f.State}, buffer: &f.Buffer, timer: f.Timer,
		ordering: f.Ordering, resolution: f.OrderResolutionMs}
}

func (f *runAgentFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, env []byte, emit func(int64, []byte)) error {
	return f.rt.m.metered(ctx, sp, func(sp state.Provider) error { return f.frame().call(ctx, ts, sp, tp, key, emit).element(env) })
}

func (f *runAgentFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit func(int64, []byte)) error {
	return f.rt.m.metered(ctx, sp, func(sp state.Provider) error { return f.frame().call(ctx, ts, sp, tp, key, emit).timer(t) })
}

// frame binds a DoFn's runtime, state, timer and ordering settings.
type frame struct {
	rt         *runtime
	layout     layout
	buffer     *state.Bag[[]byte]
	timer      timers.EventTime
	ordering   Ordering
	resolution int64
}

// firing is one call of the stateful DoFn: one element or timer of one key.
type firing struct {
	*frame
	ctx  context.Context
	sp   state.Provider
	tp   timers.Provider
	key  []byte
	now  int64 // the element's or the timer's event time
	emit func(int64, []byte)
}

func (fr *frame) call(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, emit func(int64, []byte)) *firing {
	return &firing{frame: fr, ctx: ctx, sp: sp, tp: tp, key: key, now: mtime.Time(ts).Milliseconds(), emit: emit}
}

// runtime is what a DoFn instance builds at setup: the agent, its dependencies, counters.
type runtime struct {
	agent *agent.Agent
	deps  agent.Deps

	activations, firings, modelCalls           beam.Counter
	stateReads, stateWrites, stateBytesWritten beam.Counter
	deadLetters                                beam.Counter
	m                                          *meters
}

func newRuntime(name string, config []byte, keyringRef string, allowUnsigned bool, verifyResults string) (*runtime, error) {
	a, err := agent.Build(name, config)
	if err != nil {
		return nil, err
	}
	rt := &runtime{agent: a, deps: agent.Deps{AllowUnsigned: allowUnsigned}}
	if keyringRef != "" {
		if rt.deps.Keyring, err = intent.LoadKeyring(keyringRef); err != nil {
			return nil, err
		}
	}
	if rt.deps.VerifyResults, err = resultsMode(verifyResults, rt.deps.Keyring); err != nil {
		return nil, err
	}
	c := func(n string) beam.Counter { return beam.NewCounter("beamagents", n) }
	rt.activations, rt.firings, rt.modelCalls = c("activations"), c("timer_firings"), c("model_calls")
	rt.stateReads, rt.stateWrites, rt.stateBytesWritten = c("state_reads"), c("state_writes"), c("state_bytes_written")
	rt.deadLetters = c("dead_letters")
	rt.m = newMeters()
	return rt, nil
}

// resultsMode parses Options.VerifyResults: nil for off, else the mode, which needs a keyring.
func resultsMode(s string, kr *intent.Keyring) (*intent.Mode, error) {
	if s == "" {
		return nil, nil
	}
	m, err := intent.ParseMode(s)
	switch {
	case err != nil:
		return nil, err
	case m == intent.ModeOff:
		return nil, nil
	case kr == nil:
		return nil, fmt.Errorf("verifying results in mode %s needs a keyring", m)
	}
	return &m, nil
}

// useModel replaces the agent's model with the launch-time provider o.
func (rt *runtime) useModel(o hosted.Options) error {
	m, err := hosted.New(o)
	if err != nil {
		return err
	}
	rt.agent, err = rt.agent.WithModel(m, o.Name, true)
	return err
}

func (f *firing) element(raw []byte) error {
	in := drive.DecodeInput(f.key, raw)
	switch {
	case in.Dead != nil:
		f.rt.deadLetters.Inc(f.ctx, 1)
		f.emit(outDeadLetter, drive.Marshal(in.Dead))
		return nil
	case in.Snapshot != nil:
		return f.restore(in.Snapshot)
	case f.ordering == ArrivalOrder:
		return f.arrival(in.Env, "")
	}
	if err := f.buffer.Add(f.sp, drive.AppendFrame(nil, in.Env.GetEventTimeMs(), raw)); err != nil {
		return err
	}
	f.rt.stateWrites.Inc(f.ctx, 1)
	b := drive.Bucket(in.Env.GetEventTimeMs(), f.resolution)
	f.frame.timer.Set(f.tp, toTime(max(b, f.now)), timers.WithTag(drive.OrderTag(b)))
	return nil
}

// timer is one firing of the key's timer (any tag). With event-time ordering it runs the
// buffered envelopes due by now and the core timers due by now, in event time
// (drive.Core.Firing). The core timers live in the ordering buffer beside the envelopes; the
// Beam timers only wake the key, so a Beam timer that fires after the core moved it changes
// nothing.
func (f *firing) timer(t timers.Context) error {
	f.rt.firings.Inc(f.ctx, 1)
	if f.ordering == ArrivalOrder {
		if t.Tag != agent.TagDeadline && t.Tag != agent.TagTTL {
			return nil
		}
		return f.arrival(nil, t.Tag)
	}
	raw, _, err := f.buffer.Read(f.sp)
	if err != nil {
		return err
	}
	f.rt.stateReads.Inc(f.ctx, 1)
	due, rest, coreTimers, bad := drive.Split(raw, f.now)
	if bad > 0 {
		f.rt.deadLetters.Inc(f.ctx, 1)
		f.emit(outDeadLetter, drive.Marshal(drive.CorruptBuffer(f.key, bad)))
	}
	cleared := map[string]bool{t.Tag: true}
	for _, d := range due {
		// The ordering timer of a bucket this firing has reached would find nothing left to
		// do; a bucket after now (a core timer fired inside it) may still hold envelopes.
		b := drive.Bucket(d.Env.GetEventTimeMs(), f.resolution)
		if tag := drive.OrderTag(b); b <= f.now && !cleared[tag] {
			cleared[tag] = true
			f.frame.timer.ClearTag(f.tp, tag)
		}
	}
	before := coreTimers.Clone()
	coreTimers.Woken(t.Tag, f.now)
	b := f.batch()
	core := f.rt.core()
	core.Around = func(activate func() *agent.Result) *agent.Result { return f.rt.m.timed(f.ctx, activate) }
	core.Firing(f.ctx, b, f.key, due, coreTimers, f.now, f.output)
	f.rt.activations.Inc(f.ctx, int64(len(due)))
	if err := f.commit(b); err != nil {
		return err
	}
	ops := drive.Changes(before, coreTimers)
	if len(due) > 0 || bad > 0 || len(ops) > 0 {
		if err := f.rebuffer(drive.AppendTimers(rest, coreTimers)); err != nil {
			return err
		}
	}
	f.setTimers(ops)
	return nil
}

// rebuffer replaces the buffer by what is left: the envelopes not yet due and the armed core
// timers, packed as one element.
func (f *firing) rebuffer(rest []byte) error {
	if err := f.buffer.Clear(f.sp); err != nil {
		return err
	}
	f.rt.stateWrites.Inc(f.ctx, 1)
	if len(rest) == 0 {
		return nil
	}
	f.rt.stateWrites.Inc(f.ctx, 1)
	return f.buffer.Add(f.sp, rest)
}

// restore applies a state restore immediately: restores precede the key's envelopes, which
// wait in the ordering buffer. A restored suspension's deadline joins the buffer's timers.
func (f *firing) restore(snap *pb.StateSnapshot) error {
	b := f.batch()
	coreTimers := drive.Timers{}
	f.rt.core().Restore(f.ctx, b, snap, coreTimers, f.output)
	if err := f.commit(b); err != nil {
		return err
	}
	if f.ordering == ArrivalOrder {
		f.setTimers(b.Timers())
		return nil
	}
	if len(coreTimers) > 0 {
		if err := f.buffer.Add(f.sp, drive.AppendTimers(nil, coreTimers)); err != nil {
			return err
		}
		f.rt.stateWrites.Inc(f.ctx, 1)
	}
	f.setTimers(drive.Changes(nil, coreTimers))
	return nil
}

// arrival runs one envelope, or one firing of a core timer (tag), as it arrives
// (ArrivalOrder).
func (f *firing) arrival(env *pb.AgentEnvelope, tag string) error {
	b := f.batch()
	if env != nil {
		res := f.rt.m.timed(f.ctx, func() *agent.Result {
			res, _ := b.Activate(f.ctx, env) // a failure is a dead letter in res
			return res
		})
		f.rt.activations.Inc(f.ctx, 1)
		f.output(res)
	} else {
		res, _ := b.Fire(f.ctx, f.key, tag, f.now)
		f.output(res)
	}
	if err := f.commit(b); err != nil {
		return err
	}
	f.setTimers(b.Timers())
	return nil
}

func (f *firing) batch() *agent.Batch {
	return f.rt.agent.NewBatch(layoutStore{f.sp, f.layout}, f.rt.deps)
}

func (rt *runtime) core() drive.Core { return drive.Core{Agent: rt.agent, Deps: rt.deps} }

// commit writes the state the batch changed, once.
func (f *firing) commit(b *agent.Batch) error {
	writes, n, err := f.layout.write(f.sp, b.Writes())
	if err != nil {
		return fmt.Errorf("committing state: %w", err)
	}
	f.rt.stateReads.Inc(f.ctx, int64(f.layout.reads()))
	f.rt.stateWrites.Inc(f.ctx, int64(writes))
	f.rt.stateBytesWritten.Inc(f.ctx, int64(n))
	return nil
}

// setTimers applies Beam timer operations (one per tag), never earlier than now.
func (f *firing) setTimers(ops []agent.TimerOp) {
	for _, op := range ops {
		if op.Set {
			f.frame.timer.Set(f.tp, toTime(max(op.AtMs, f.now)), timers.WithTag(op.Tag))
		} else {
			f.frame.timer.ClearTag(f.tp, op.Tag)
		}
	}
}

// Output kinds of the stateful step's single output.
const (
	outIntent     = drive.OutIntent
	outTrace      = drive.OutTrace
	outFinal      = drive.OutFinal
	outSnapshot   = drive.OutSnapshot
	outDeadLetter = drive.OutDeadLetter
)

// output emits a result's outputs, tagged by kind.
func (f *firing) output(res *agent.Result) {
	f.rt.modelCalls.Inc(f.ctx, int64(res.ModelCalls))
	f.rt.deadLetters.Inc(f.ctx, int64(len(res.DeadLetters)))
	f.rt.m.result(f.ctx, res)
	drive.Emit(res, f.emit)
}

func toTime(ms int64) time.Time { return mtime.Time(ms).ToTime() }
