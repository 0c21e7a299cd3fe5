package transforms

import (
	"context"
	"fmt"
	"time"

	"github.com/beamagents/beamagents/ledger"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/window"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/keysched"
	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/statedir"
)

func init() {
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []byte, tagged, error](&runAgentFn{})
	register.Emitter3[beam.EventTime, int64, []byte]()
}

// Stable names: the --update contract of a RunAgent pipeline (see the package documentation).
const (
	StateCellID    = "agent_state.v1"  // the combined state cell (AgentStateCells)
	OrderBufferID  = "order_buffer.v1" // envelopes waiting for the watermark (EventTimeOrder)
	TimerFamilyID  = "agent.v1"        // the one timer family; tags: deadline, ttl, order:<ms>, burst:<ms>
	RunAgentScope  = "RunAgent"        // scope of the stateful step
	DefaultOrderMs = int64(1000)       // default event-time ordering resolution
)

// Options configure RunAgent.
type Options struct {
	// Agent is the registered agent to run (agent.Register); Config is passed to its factory.
	Agent  string
	Config []byte
	// Prices is the launch's price table (run --prices): the cost ledger prices model calls
	// at it, and a tenant cost budget (budget.Budget.CostMicros) reserves its grants at it.
	Prices ledger.Table
	// Canary, when set, runs a slice of the keys on another agent (canary.go).
	Canary Canary
	// Keyring is the reference (env:VAR or file:PATH) of the keyring that signs intents,
	// loaded on each worker at setup; empty means intents cannot be signed.
	Keyring string
	// MemoryStore is the reference of the long-term memory store the agent's Recall and
	// Remember reach (host.Deps.LongTermMemory): one backend.Open takes (sqlite:PATH,
	// redis://…, bigtable:…), or a secret reference (env:VAR, file:PATH, gcpsm:…) holding one,
	// as a Redis reference with its password should be given. Each worker process opens it
	// once, at the first setup, and shares it; empty means no store, and every Recall or
	// Remember fails its activation as memory_store_failed.
	MemoryStore string
	// Ordering is EventTimeOrder (the default) or ArrivalOrder; OrderResolutionMs is the
	// event-time ordering resolution, default DefaultOrderMs.
	Ordering          Ordering
	OrderResolutionMs int64
	// AllowUnsignedIntents emits intents unsigned when there is no Keyring (host.Deps),
	// which consumers verifying in intent.ModePermissive or intent.ModeOff accept and
	// intent.ModeRequire refuses. Without it, every intent of a run without a Keyring is a
	// signing_failed dead letter.
	AllowUnsignedIntents bool
	// VerifyResults, when set and not intent.ModeOff, is how tool results and approvals are
	// verified against Keyring, which it needs, before they may resume an activation
	// (host.Deps.VerifyResults); nil admits them unchecked. A refused one is a
	// result_refused or approval_refused dead letter.
	VerifyResults *intent.Mode

	// BatchWorkers is how many groups of keys of a bundle RunAgentBatch runs at once: 0 means
	// as many as the worker has cores (GOMAXPROCS), 1 one key after another. RunAgent ignores it.
	BatchWorkers int

	// Model, when it names a hosted provider, replaces the agent's model (unless the agent
	// pins its own); the provider and its key are created on each worker at setup.
	Model hosted.Options

	// ModelConcurrency is how many keys' activations may wait on the model at once in one
	// worker process, across the step's bundles (each key still runs one activation at a
	// time, in its order, and the outputs do not depend on it). 0 means, with a hosted
	// model, its endpoints' cap on calls in flight (Model.Limits.Concurrency, by default
	// DefaultModelConcurrency), and 1 with the agent's own in-process model; 1 runs every
	// firing to its end before the next. An input not in the global window runs with 1.
	ModelConcurrency int

	// AtEnd is what happens at the end of a bounded input to a key still waiting on tool
	// results or approvals: AtEndFail (the default, "") lets the final watermark fire its
	// deadline, which escalates and then fails closed (activation_timeout,
	// approval_timeout); AtEndPark parks it: no timer after InputEndMs fires, and the key's
	// state goes to the snapshots output as a StateSnapshot with request id
	// drive.ParkedRequestID, which a later run restores (pipeline.Options.Resume). Parking
	// needs InputEndMs, the event time the input ends at (its last envelope's; the pipeline
	// reads it from the input files); it is for bounded inputs only.
	AtEnd      AtEnd
	InputEndMs *int64

	// Shadow runs the agent as a shadow beside production (TryRunShadow): its intents are
	// never signed and carry the shadow mark (intent.MarkShadow), which every effector
	// refuses; Keyring, if any, only verifies answers.
	Shadow bool

	// Capture is the id of a process-local statedir.Capture that records every key's state
	// for a restart (`run --state_dir`); empty for none, and ignored by workers in another
	// process. It needs event-time ordering.
	Capture string
}

// AtEnd is Options.AtEnd: what the end of a bounded input does to a key still waiting.
type AtEnd string

// The end-of-input behaviours.
const (
	AtEndFail AtEnd = "fail"
	AtEndPark AtEnd = "park"
)

// DefaultModelConcurrency is Options.ModelConcurrency's default with a hosted model.
const DefaultModelConcurrency = limit.DefaultConcurrency

// concurrency is o's ModelConcurrency with its default applied.
func (o Options) concurrency() int {
	switch {
	case o.ModelConcurrency > 0:
		return o.ModelConcurrency
	case o.Model.Hosted() && o.Model.Limits.Concurrency > 0:
		return o.Model.Limits.Concurrency
	case o.Model.Hosted():
		return DefaultModelConcurrency
	}
	return 1
}

// Check validates o at pipeline construction: the agent is registered and builds from its
// configuration, the ordering, the result verification and the model options are valid. The
// keyring and the memory store are references resolved on the workers, so only their form
// is checked here.
func (o Options) Check() error {
	a, err := agent.Build(o.Agent, o.Config)
	if err != nil {
		return err
	}
	if err := o.Canary.check(a, o.Config); err != nil {
		return err
	}
	if o.Keyring != "" {
		if err := intent.CheckKeyringRef(o.Keyring); err != nil {
			return err
		}
	}
	if _, err := verifyMode(o.VerifyResults, o.Keyring != ""); err != nil {
		return err
	}
	if o.MemoryStore != "" {
		if err := backend.CheckRef(o.MemoryStore); err != nil {
			return err
		}
	}
	switch o.Ordering {
	case "", EventTimeOrder, ArrivalOrder:
	default:
		return fmt.Errorf("unknown ordering %q (want %q or %q)", o.Ordering, EventTimeOrder, ArrivalOrder)
	}
	if o.OrderResolutionMs < 0 {
		return fmt.Errorf("order resolution %d ms is negative", o.OrderResolutionMs)
	}
	switch o.AtEnd {
	case "", AtEndFail:
	case AtEndPark:
		switch {
		case o.InputEndMs == nil:
			return fmt.Errorf("parking waiting keys at the end of the input needs the input's end (InputEndMs)")
		case o.Capture != "":
			return fmt.Errorf("parking waiting keys is for bounded inputs; a run keeping state across restarts drains them instead")
		}
	default:
		return fmt.Errorf("unknown end-of-input behaviour %q (want %q or %q)", o.AtEnd, AtEndFail, AtEndPark)
	}
	if o.Capture != "" && o.Ordering == ArrivalOrder {
		return fmt.Errorf("keeping state across restarts needs event-time ordering")
	}
	if o.BatchWorkers < 0 || o.ModelConcurrency < 0 {
		return fmt.Errorf("batch workers (%d) and model concurrency (%d) must not be negative", o.BatchWorkers, o.ModelConcurrency)
	}
	return o.Model.Check()
}

// withDefaults returns o with the defaults RunAgent and RunAgentBatch apply.
func (o Options) withDefaults() Options {
	if o.Ordering == "" {
		o.Ordering = EventTimeOrder
	}
	if o.OrderResolutionMs <= 0 {
		o.OrderResolutionMs = DefaultOrderMs
	}
	return o
}

// Outputs are RunAgent's outputs, each a PCollection<[]byte> of deterministically serialized
// messages: ToolIntent, TraceEvent, FinalReply, StateSnapshot, ActivationErrorRecord.
type Outputs struct {
	Intents, Traces, Finals, Snapshots, DeadLetters beam.PCollection
}

// RunAgent runs the registered agent over keyed envelopes (PCollection<KV<[]byte, []byte>>,
// the output of DecodeEnvelopes): one stateful step keyed by entity key. It panics when
// opts do not pass Options.Check; TryRunAgent returns the error instead.
func RunAgent(s beam.Scope, opts Options, keyed beam.PCollection) Outputs {
	out, err := TryRunAgent(s, opts, keyed)
	if err != nil {
		panic(err)
	}
	return out
}

// TryRunAgent is RunAgent, returning an error when opts do not pass Options.Check.
func TryRunAgent(s beam.Scope, opts Options, keyed beam.PCollection) (Outputs, error) {
	s = s.Scope(RunAgentScope)
	if err := opts.Check(); err != nil {
		return Outputs{}, fmt.Errorf("RunAgent: %w", err)
	}
	requirePrismNoSplit()
	opts = opts.withDefaults()
	if keyed.WindowingStrategy().Fn.Kind != window.GlobalWindows {
		opts.ModelConcurrency = 1
	}
	// A tenant's budget admits the entity's events before they are spread over its sub-keys.
	keyed, err := admitTenants(s, opts, keyed, false)
	if err == nil {
		keyed, err = shardKeyed(s, opts, keyed)
	}
	if err != nil {
		return Outputs{}, fmt.Errorf("RunAgent: %w", err)
	}
	return splitOutputs(s, beam.ParDo(s, newRunAgentFn(opts), keyed)), nil
}

// newRunAgentFn is the stateful step over o, its ModelConcurrency resolved.
func newRunAgentFn(o Options) *runAgentFn {
	o.ModelConcurrency = o.concurrency()
	return &runAgentFn{Options: o, Instance: newInstanceID(),
		State:  state.MakeValueState[[]byte](StateCellID),
		Buffer: state.MakeBagState[[]byte](OrderBufferID),
		Timer:  timers.InEventTime(TimerFamilyID),
	}
}

// runAgentFn is the stateful DoFn. It reads the key's cells, calls the activation core, writes
// the cells that changed, sets the timers and emits the outputs, tagged by kind.
type runAgentFn struct {
	// Options are RunAgent's, with their defaults and ModelConcurrency resolved; Instance
	// tells this step's activations running apart from their bundles from another step's in
	// the same process.
	Options  Options
	Instance string

	State  state.Value[[]byte]
	Buffer state.Bag[[]byte]
	Timer  timers.EventTime

	rt     *runtime
	obs    observer         // what watches the step's effects (a statedir capture), once set up
	jobs   *jobTable        // when ModelConcurrency > 1: this RunAgent's jobs in the process
	bundle *keysched.Bundle // the bundle running: a job started in it was started by this instance
}

// tagged emits one output of the stateful step, with its kind and its event time: an
// activation run apart from its bundle (Options.ModelConcurrency) emits in a later call.
type tagged = func(beam.EventTime, int64, []byte)

func (f *runAgentFn) Setup() (err error) {
	f.obs = observe(statedir.Lookup(f.Options.Capture))
	if f.rt, err = newRuntime(f.Options); err != nil {
		return err
	}
	if f.Options.ModelConcurrency > 1 {
		f.jobs, err = keysched.Acquire[stepData](f.Instance, f.Options.ModelConcurrency)
	}
	return err
}

// Teardown releases the instance's hold on the step's jobs: the last instance of the step in
// the process frees them.
func (f *runAgentFn) Teardown() {
	f.jobs.Release()
	f.jobs = nil
	f.rt.close()
}

func (f *runAgentFn) StartBundle(context.Context, tagged) { f.bundle = f.jobs.NewBundle() }

func (f *runAgentFn) frame() *frame {
	return &frame{rt: f.rt, obs: f.obs, layout: &combined{cell: &f.State}, buffer: &f.Buffer, timer: f.Timer,
		ordering: f.Options.Ordering, resolution: f.Options.OrderResolutionMs, jobs: f.jobs, bundle: f.bundle, cell: &f.State}
}

func (f *runAgentFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, env []byte, emit tagged) error {
	return f.rt.m.metered(ctx, sp, func(sp state.Provider) error { return f.frame().call(ctx, ts, sp, tp, key, emit).element(env) })
}

func (f *runAgentFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit tagged) error {
	return f.rt.m.metered(ctx, sp, func(sp state.Provider) error { return f.frame().call(ctx, ts, sp, tp, key, emit).timer(t) })
}

// frame binds a DoFn's runtime, state, timer and ordering settings.
type frame struct {
	rt         *runtime
	obs        observer
	layout     layout
	buffer     *state.Bag[[]byte]
	timer      timers.EventTime
	ordering   Ordering
	resolution int64
	jobs       *jobTable            // nil: every firing runs to its end in its own call
	bundle     *keysched.Bundle     // the bundle running
	cell       *state.Value[[]byte] // the combined cell, read whole for a job
}

// firing is one call of the stateful DoFn: one element or timer of one key.
type firing struct {
	*frame
	ctx  context.Context
	sp   state.Provider
	tp   timers.Provider
	key  []byte
	now  int64  // the element's or the timer's event time
	tag  string // the timer's tag
	emit tagged
	// Set once the call carried a job's effects out (stepjob.go): the state cell and the
	// buffer as it wrote them.
	written *combined
	bagNow  *[][]byte
}

func (fr *frame) call(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, emit tagged) *firing {
	return &firing{frame: fr, ctx: ctx, sp: sp, tp: tp, key: key, now: mtime.Time(ts).Milliseconds(), emit: emit}
}

// runtime is what a DoFn instance builds at setup: the agent, its dependencies, counters.
type runtime struct {
	agent *agent.Agent
	deps  host.Deps
	park  bool // Options.AtEnd is AtEndPark, the input ending at endMs
	// memory is the resolved reference of deps.LongTermMemory, held until close.
	memory string
	endMs  int64

	activations, firings, modelCalls           beam.Counter
	stateReads, stateWrites, stateBytesWritten beam.Counter
	deadLetters, staleSteps, passedOver        beam.Counter
	m                                          *meters
}

// newRuntime builds what a DoFn instance of o runs: the agent (with o's hosted model, if any),
// the keyring, the result verification, the long-term memory store (shared in the process,
// released by close) and the counters.
func newRuntime(o Options) (*runtime, error) {
	a, err := agent.Build(o.Agent, o.Config)
	if err != nil {
		return nil, err
	}
	if a, err = o.Canary.route(a, o.Config); err != nil {
		return nil, err
	}
	rt := &runtime{agent: a, deps: host.Deps{AllowUnsigned: o.AllowUnsignedIntents, Shadow: o.Shadow}}
	if o.AtEnd == AtEndPark && o.InputEndMs != nil {
		rt.park, rt.endMs = true, *o.InputEndMs
	}
	if o.Keyring != "" {
		if rt.deps.Keyring, err = intent.LoadKeyring(o.Keyring); err != nil {
			return nil, err
		}
	}
	if rt.deps.VerifyResults, err = verifyMode(o.VerifyResults, rt.deps.Keyring != nil); err != nil {
		return nil, err
	}
	if o.Model.Hosted() {
		if err := rt.useModel(o.Model); err != nil {
			return nil, err
		}
	}
	if o.MemoryStore != "" {
		if rt.deps.LongTermMemory, rt.memory, err = acquireMemory(context.Background(), o.MemoryStore); err != nil {
			return nil, fmt.Errorf("long-term memory store: %w", err)
		}
	}
	c := func(n string) beam.Counter { return beam.NewCounter("beamagents", n) }
	rt.activations, rt.firings, rt.modelCalls = c("activations"), c("timer_firings"), c("model_calls")
	rt.stateReads, rt.stateWrites, rt.stateBytesWritten = c("state_reads"), c("state_writes"), c("state_bytes_written")
	rt.deadLetters, rt.staleSteps, rt.passedOver = c("dead_letters"), c("stale_steps"), c("passed_over")
	rt.m = newMeters()
	return rt, nil
}

// close releases what the runtime holds in the process: its long-term memory store.
func (rt *runtime) close() {
	if rt != nil && rt.memory != "" {
		releaseMemory(rt.memory)
		rt.memory = ""
	}
}

// verifyMode is Options.VerifyResults as host.Deps takes it: nil for off, else a copy of the
// mode, which needs a keyring.
func verifyMode(m *intent.Mode, keyring bool) (*intent.Mode, error) {
	switch {
	case m == nil || *m == intent.ModeOff:
		return nil, nil
	case *m != intent.ModeRequire && *m != intent.ModePermissive:
		return nil, fmt.Errorf("unknown result verification mode %d", int(*m))
	case !keyring:
		return nil, fmt.Errorf("verifying results in mode %s needs a keyring", *m)
	}
	v := *m
	return &v, nil
}

// useModel replaces the agent's model with the launch-time provider o, unless the agent pins
// its own.
func (rt *runtime) useModel(o hosted.Options) error {
	if rt.agent.PinsModel() {
		return nil
	}
	m, err := hosted.New(o)
	if err != nil {
		return err
	}
	rt.agent, err = rt.agent.WithModel(progress.Counted(m), o.Name, true)
	return err
}

// element is one arriving envelope or restore of the key: with event-time ordering an
// envelope only joins the buffer; a restore needs the key's state as committed.
func (f *firing) element(raw []byte) error {
	restore := len(raw) > 0 && raw[0] == drive.RestoreMark
	if done, err := f.ask(keysched.Call{Element: true, Settle: restore, Epoch: f.bundle.Epoch}); done || err != nil {
		return err
	}
	b := f.batch()
	e := f.core().Step(f.ctx, b, f.key, drive.Trigger{Value: raw, AtMs: f.now}, nil)
	return f.carry(f.now, nil, b.Writes(), raw, &e)
}

// timer is one firing of the key's timer (any tag). With event-time ordering it runs the
// buffered envelopes due by now and the core timers due by now, in event time
// (drive.Core.Step). The core timers live in the ordering buffer beside the envelopes; the
// Beam timers only wake the key, so a Beam timer that fires after the core moved it changes
// nothing. With Options.ModelConcurrency > 1 a firing with due envelopes runs apart from the
// bundle (stepjob.go).
func (f *firing) timer(t timers.Context) error {
	f.tag = t.Tag
	if done, err := f.ask(keysched.Call{Tag: t.Tag, Epoch: f.bundle.Epoch, Frozen: f.obs.frozen()}); done || err != nil {
		return err
	}
	var bl *drive.Backlog
	if f.ordering != ArrivalOrder {
		raw, err := f.readBuffer()
		if err != nil {
			return err
		}
		if bl = drive.ReadBuffer(raw, f.now); f.jobs != nil && len(bl.Due) > 0 {
			return f.start(raw, bl)
		}
	}
	b := f.batch()
	e := f.core().Step(f.ctx, b, f.key, drive.Trigger{Tag: t.Tag, AtMs: f.now}, bl)
	return f.carry(f.now, nil, b.Writes(), nil, &e)
}

// core is the step's core, each activation timed for the latency metric.
func (f *firing) core() drive.Core {
	c := f.rt.core(f.frame)
	c.Around = func(activate func() *host.Result) *host.Result { return f.rt.m.timed(f.ctx, activate) }
	return c
}

// carry carries out a step's effects at event time at: it emits the outputs (timestamped at,
// or each at its stamp), commits the cells the step wrote, changes the buffer and applies the
// timer operations; then the observer sees them (value is the element the step took, nil
// for a firing).
func (f *firing) carry(at int64, stamps []int64, writes map[statecodec.Cell][]byte, value []byte, e *drive.Effects) error {
	f.count(e)
	ts := mtime.FromMilliseconds(at)
	for i, o := range e.Outputs {
		if stamps != nil {
			ts = mtime.FromMilliseconds(stamps[i])
		}
		f.emit(ts, o.Kind, o.Bytes)
	}
	if err := f.commit(writes); err != nil {
		return err
	}
	if err := f.rebuffer(e); err != nil {
		return err
	}
	f.setTimers(e.TimerOps, at)
	if len(e.TimerOps) > 0 {
		f.bundle.Touch(f.key)
	}
	f.obs.carried(f, value, e)
	return nil
}

// count adds a step's effects to the metrics.
func (f *firing) count(e *drive.Effects) {
	if e.Firing {
		f.rt.firings.Inc(f.ctx, 1)
	}
	f.rt.activations.Inc(f.ctx, int64(e.Activations))
	noteProgress("activations", int64(e.Activations))
	for _, r := range e.Results {
		f.rt.modelCalls.Inc(f.ctx, int64(r.ModelCalls))
		f.rt.m.result(f.ctx, r)
	}
	for _, o := range e.Outputs {
		if o.Kind == records.OutDeadLetter {
			f.rt.deadLetters.Inc(f.ctx, 1)
			noteProgress("dead_letters", 1)
		}
	}
}

// rebuffer changes the ordering buffer as a step decided (drive.Effects.BagOps): an arriving
// envelope or a restore's timers add one element; a firing replaces the buffer by what is
// left (the envelopes not yet due and the armed core timers, packed as one element).
func (f *firing) rebuffer(e *drive.Effects) error {
	clearFirst, add := e.BagOps()
	if clearFirst {
		if err := f.buffer.Clear(f.sp); err != nil {
			return err
		}
		f.rt.stateWrites.Inc(f.ctx, 1)
	}
	if len(add) == 0 {
		return nil
	}
	f.rt.stateWrites.Inc(f.ctx, 1)
	return f.buffer.Add(f.sp, add)
}

func (f *firing) batch() host.Batch {
	return host.NewBatch(f.rt.agent, layoutStore{f.sp, f.layout}, f.rt.deps)
}

func (rt *runtime) core(fr *frame) drive.Core {
	c := drive.Core{Agent: rt.agent, Deps: rt.deps, Park: rt.park, EndMs: rt.endMs}
	if fr != nil {
		c.OrderResolutionMs, c.Arrival = fr.resolution, fr.ordering == ArrivalOrder
	}
	return c
}

// commit writes the cells a step changed, once.
func (f *firing) commit(writes map[statecodec.Cell][]byte) error {
	n, bytes, err := f.layout.write(f.sp, writes)
	if err != nil {
		return fmt.Errorf("committing state: %w", err)
	}
	f.rt.stateReads.Inc(f.ctx, int64(f.layout.reads()))
	f.rt.stateWrites.Inc(f.ctx, int64(n))
	f.rt.stateBytesWritten.Inc(f.ctx, int64(bytes))
	return nil
}

// setTimers applies Beam timer operations, never earlier than at.
func (f *firing) setTimers(ops []host.TimerOp, at int64) {
	for _, op := range ops {
		if op.Set {
			f.frame.timer.Set(f.tp, toTime(max(op.AtMs, at)), timers.WithTag(op.Tag))
		} else {
			f.frame.timer.ClearTag(f.tp, op.Tag)
		}
	}
}

func toTime(ms int64) time.Time { return mtime.Time(ms).ToTime() }
