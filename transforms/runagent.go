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
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
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
	Ordering          Ordering
	OrderResolutionMs int64
	Model             hosted.Options

	State  state.Value[[]byte]
	Buffer state.Bag[[]byte]
	Timer  timers.EventTime

	rt *runtime
}

func (f *runAgentFn) Setup() error {
	rt, err := newRuntime(f.Agent, f.Config, f.Keyring)
	if err == nil && f.Model.Hosted() {
		err = rt.useModel(f.Model)
	}
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

// useModel replaces the agent's model with the launch-time provider o.
func (rt *runtime) useModel(o hosted.Options) error {
	m, err := hosted.New(o)
	if err != nil {
		return err
	}
	rt.agent, err = rt.agent.WithModel(m, o.Name, true)
	return err
}

func (rt *runtime) element(ctx context.Context, fr *frame, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, raw []byte, emit func(int64, []byte)) error {
	if len(raw) > 0 && raw[0] == restoreMark {
		return rt.restore(ctx, fr, sp, tp, key, raw[1:], mtime.Time(ts).Milliseconds(), emit)
	}
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(raw, env); err != nil {
		rt.deadLetters.Inc(ctx, 1)
		emit(OutDeadLetter, deadLetter(&pb.AgentEnvelope{EntityKey: key}, agent.ReasonEnvelopeInvalid, invalid(err, "keyed envelope")))
		return nil
	}
	now := mtime.Time(ts).Milliseconds()
	if fr.ordering == ArrivalOrder {
		return rt.run(ctx, fr, sp, tp, key, now, []*pb.AgentEnvelope{env}, "", emit)
	}
	if err := fr.buffer.Add(sp, appendFrame(nil, env.GetEventTimeMs(), raw)); err != nil {
		return err
	}
	rt.stateWrites.Inc(ctx, 1)
	b := bucket(env.GetEventTimeMs(), fr.resolution)
	fr.timer.Set(tp, toTime(max(b, now)), timers.WithTag(orderTag(b)))
	return nil
}

func (rt *runtime) fire(ctx context.Context, fr *frame, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit func(int64, []byte)) error {
	at := mtime.Time(ts).Milliseconds()
	rt.firings.Inc(ctx, 1)
	var envs []*pb.AgentEnvelope
	if fr.ordering == EventTimeOrder {
		raw, _, err := fr.buffer.Read(sp)
		if err != nil {
			return err
		}
		rt.stateReads.Inc(ctx, 1)
		due, rest, bad := splitDue(raw, at)
		if bad > 0 {
			rt.deadLetters.Inc(ctx, int64(bad))
			emit(OutDeadLetter, deadLetter(&pb.AgentEnvelope{EntityKey: key}, agent.ReasonStateCorrupt, invalid(nil, "%d ordering-buffer entries do not decode", bad)))
		}
		if len(due) > 0 || bad > 0 {
			if err := rt.rebuffer(ctx, fr, sp, rest); err != nil {
				return err
			}
		}
		cleared := map[string]bool{t.Tag: true}
		for _, d := range due {
			envs = append(envs, d.env)
			// The due envelopes' own ordering timers would find nothing left to do.
			if tag := orderTag(bucket(d.env.GetEventTimeMs(), fr.resolution)); !cleared[tag] {
				cleared[tag] = true
				fr.timer.ClearTag(tp, tag)
			}
		}
	}
	firing := ""
	if t.Tag == agent.TagDeadline || t.Tag == agent.TagTTL {
		firing = t.Tag
	}
	return rt.run(ctx, fr, sp, tp, key, at, envs, firing, emit)
}

// rebuffer replaces the buffer by the envelopes left behind, packed as one element.
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
// wait in the ordering buffer.
func (rt *runtime) restore(ctx context.Context, fr *frame, sp state.Provider, tp timers.Provider, key, raw []byte, now int64, emit func(int64, []byte)) error {
	snap := &pb.StateSnapshot{}
	if err := proto.Unmarshal(raw, snap); err != nil {
		rt.deadLetters.Inc(ctx, 1)
		emit(OutDeadLetter, deadLetter(&pb.AgentEnvelope{EntityKey: key}, agent.ReasonRestoreRefused, err))
		return nil
	}
	st := newStore(sp, fr.layout)
	res, _ := rt.agent.Restore(ctx, st, snap)
	st.apply(res)
	return rt.commit(ctx, fr, tp, st, now, []*agent.Result{res}, emit)
}

// run hands envelopes (in order) and then an optional timer firing to the core, threading
// the key's state through them, and commits the result once.
func (rt *runtime) run(ctx context.Context, fr *frame, sp state.Provider, tp timers.Provider, key []byte, now int64, envs []*pb.AgentEnvelope, firing string, emit func(int64, []byte)) error {
	if len(envs) == 0 && firing == "" {
		return nil
	}
	st := newStore(sp, fr.layout)
	var results []*agent.Result
	for _, env := range envs {
		res, _ := rt.agent.Activate(ctx, st, env, rt.deps) // a failure is a dead letter in res
		rt.activations.Inc(ctx, 1)
		st.apply(res)
		results = append(results, res)
	}
	if firing != "" {
		res, _ := rt.agent.Fire(ctx, st, key, firing, now, rt.deps)
		st.apply(res)
		results = append(results, res)
	}
	return rt.commit(ctx, fr, tp, st, now, results, emit)
}

// commit emits the results' outputs, writes the state they changed (already applied to st)
// once, and sets their timers (the last operation per tag wins), never earlier than now.
func (rt *runtime) commit(ctx context.Context, fr *frame, tp timers.Provider, st *store, now int64, results []*agent.Result, emit func(int64, []byte)) error {
	ops := map[string]agent.TimerOp{}
	for _, res := range results {
		rt.emit(ctx, res, emit)
		for _, op := range res.Timers {
			ops[op.Tag] = op
		}
	}
	writes, n, err := st.flush()
	if err != nil {
		return fmt.Errorf("committing state: %w", err)
	}
	rt.stateReads.Inc(ctx, int64(fr.layout.reads()))
	rt.stateWrites.Inc(ctx, int64(writes))
	rt.stateBytesWritten.Inc(ctx, int64(n))
	for _, tag := range slices.Sorted(maps.Keys(ops)) {
		op := ops[tag]
		if op.Set {
			fr.timer.Set(tp, toTime(max(op.AtMs, now)), timers.WithTag(tag))
		} else {
			fr.timer.ClearTag(tp, tag)
		}
	}
	return nil
}

// Output kinds of the stateful step's single output.
const (
	OutIntent int64 = iota + 1
	OutTrace
	OutFinal
	OutSnapshot
	OutDeadLetter
)

func (rt *runtime) emit(ctx context.Context, res *agent.Result, emit func(int64, []byte)) {
	rt.modelCalls.Inc(ctx, int64(res.ModelCalls))
	rt.deadLetters.Inc(ctx, int64(len(res.DeadLetters)))
	put := func(kind int64, m proto.Message) {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			panic(fmt.Sprintf("serializing an output: %v", err)) // outputs are built from valid messages
		}
		emit(kind, b)
	}
	for _, m := range res.Intents {
		put(OutIntent, m)
	}
	for _, m := range res.Traces {
		put(OutTrace, m)
	}
	for _, m := range res.Finals {
		put(OutFinal, m)
	}
	for _, m := range res.Snapshots {
		put(OutSnapshot, m)
	}
	for _, m := range res.DeadLetters {
		put(OutDeadLetter, m)
	}
}

func toTime(ms int64) time.Time { return mtime.Time(ms).ToTime() }
