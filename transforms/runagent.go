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
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
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
	// AllowUnsignedIntents emits intents unsigned when there is no Keyring (agent.Deps).
	AllowUnsignedIntents bool
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
		Agent: o.Agent, Config: o.Config, Keyring: o.Keyring, AllowUnsigned: o.AllowUnsignedIntents,
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
	AllowUnsigned     bool
	Ordering          Ordering
	OrderResolutionMs int64

	State  state.Value[[]byte]
	Buffer state.Bag[[]byte]
	Timer  timers.EventTime

	rt *runtime
}

func (f *runAgentFn) Setup() error {
	rt, err := newRuntime(f.Agent, f.Config, f.Keyring, f.AllowUnsigned)
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

func newRuntime(name string, config []byte, keyringRef string, allowUnsigned bool) (*runtime, error) {
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
	c := func(n string) beam.Counter { return beam.NewCounter("beamagents", n) }
	rt.activations, rt.firings, rt.modelCalls = c("activations"), c("timer_firings"), c("model_calls")
	rt.stateReads, rt.stateWrites, rt.stateBytesWritten = c("state_reads"), c("state_writes"), c("state_bytes_written")
	rt.deadLetters = c("dead_letters")
	rt.m = newMeters()
	return rt, nil
}

func (f *firing) element(raw []byte) error {
	if len(raw) > 0 && raw[0] == restoreMark {
		return f.restore(raw[1:])
	}
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(raw, env); err != nil {
		f.rt.deadLetters.Inc(f.ctx, 1)
		f.emit(outDeadLetter, deadLetter(&pb.AgentEnvelope{EntityKey: f.key}, agent.ReasonEnvelopeInvalid, invalid(err, "keyed envelope")))
		return nil
	}
	if f.ordering == ArrivalOrder {
		return f.run([]*pb.AgentEnvelope{env}, "")
	}
	if err := f.buffer.Add(f.sp, appendFrame(nil, env.GetEventTimeMs(), raw)); err != nil {
		return err
	}
	f.rt.stateWrites.Inc(f.ctx, 1)
	b := bucket(env.GetEventTimeMs(), f.resolution)
	f.frame.timer.Set(f.tp, toTime(max(b, f.now)), timers.WithTag(orderTag(b)))
	return nil
}

func (f *firing) timer(t timers.Context) error {
	f.rt.firings.Inc(f.ctx, 1)
	var envs []*pb.AgentEnvelope
	if f.ordering == EventTimeOrder {
		raw, _, err := f.buffer.Read(f.sp)
		if err != nil {
			return err
		}
		f.rt.stateReads.Inc(f.ctx, 1)
		due, rest, bad := splitDue(raw, f.now)
		if bad > 0 {
			f.rt.deadLetters.Inc(f.ctx, int64(bad))
			f.emit(outDeadLetter, deadLetter(&pb.AgentEnvelope{EntityKey: f.key}, agent.ReasonStateCorrupt, invalid(nil, "%d ordering-buffer entries do not decode", bad)))
		}
		if len(due) > 0 || bad > 0 {
			if err := f.rebuffer(rest); err != nil {
				return err
			}
		}
		cleared := map[string]bool{t.Tag: true}
		for _, d := range due {
			envs = append(envs, d.env)
			// The due envelopes' own ordering timers would find nothing left to do.
			if tag := orderTag(bucket(d.env.GetEventTimeMs(), f.resolution)); !cleared[tag] {
				cleared[tag] = true
				f.frame.timer.ClearTag(f.tp, tag)
			}
		}
	}
	tag := ""
	if t.Tag == agent.TagDeadline || t.Tag == agent.TagTTL {
		tag = t.Tag
	}
	return f.run(envs, tag)
}

// rebuffer replaces the buffer by the envelopes left behind, packed as one element.
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
// wait in the ordering buffer.
func (f *firing) restore(raw []byte) error {
	snap := &pb.StateSnapshot{}
	if err := proto.Unmarshal(raw, snap); err != nil {
		f.rt.deadLetters.Inc(f.ctx, 1)
		f.emit(outDeadLetter, deadLetter(&pb.AgentEnvelope{EntityKey: f.key}, agent.ReasonRestoreRefused, err))
		return nil
	}
	b := f.batch()
	res, _ := b.Restore(f.ctx, snap)
	f.output(res)
	return f.commit(b)
}

// run hands envelopes (in order) and then an optional timer firing (tag) to the core, in one
// batch over the key's state, and commits the batch once.
func (f *firing) run(envs []*pb.AgentEnvelope, tag string) error {
	if len(envs) == 0 && tag == "" {
		return nil
	}
	b := f.batch()
	for _, env := range envs {
		res := f.rt.m.timed(f.ctx, func() *agent.Result {
			res, _ := b.Activate(f.ctx, env) // a failure is a dead letter in res
			return res
		})
		f.rt.activations.Inc(f.ctx, 1)
		f.output(res)
	}
	if tag != "" {
		res, _ := b.Fire(f.ctx, f.key, tag, f.now)
		f.output(res)
	}
	return f.commit(b)
}

func (f *firing) batch() *agent.Batch {
	return f.rt.agent.NewBatch(layoutStore{f.sp, f.layout}, f.rt.deps)
}

// commit writes the state the batch changed, once, and sets its timers, never earlier than
// now.
func (f *firing) commit(b *agent.Batch) error {
	writes, n, err := f.layout.write(f.sp, b.Writes())
	if err != nil {
		return fmt.Errorf("committing state: %w", err)
	}
	f.rt.stateReads.Inc(f.ctx, int64(f.layout.reads()))
	f.rt.stateWrites.Inc(f.ctx, int64(writes))
	f.rt.stateBytesWritten.Inc(f.ctx, int64(n))
	for _, op := range b.Timers() {
		if op.Set {
			f.frame.timer.Set(f.tp, toTime(max(op.AtMs, f.now)), timers.WithTag(op.Tag))
		} else {
			f.frame.timer.ClearTag(f.tp, op.Tag)
		}
	}
	return nil
}

// Output kinds of the stateful step's single output.
const (
	outIntent int64 = iota + 1
	outTrace
	outFinal
	outSnapshot
	outDeadLetter
)

// output emits a result's outputs, tagged by kind.
func (f *firing) output(res *agent.Result) {
	f.rt.modelCalls.Inc(f.ctx, int64(res.ModelCalls))
	f.rt.deadLetters.Inc(f.ctx, int64(len(res.DeadLetters)))
	f.rt.m.result(f.ctx, res)
	put := func(kind int64, m proto.Message) {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			panic(fmt.Sprintf("serializing an output: %v", err)) // outputs are built from valid messages
		}
		f.emit(kind, b)
	}
	for _, m := range res.Intents {
		put(outIntent, m)
	}
	for _, m := range res.Traces {
		put(outTrace, m)
	}
	for _, m := range res.Finals {
		put(outFinal, m)
	}
	for _, m := range res.Snapshots {
		put(outSnapshot, m)
	}
	for _, m := range res.DeadLetters {
		put(outDeadLetter, m)
	}
}

func toTime(ms int64) time.Time { return mtime.Time(ms).ToTime() }
