// Package transforms holds the Beam transforms of the runtime: DecodeEnvelopes (raw records
// to keyed envelopes, undecodable input to envelope_invalid dead letters, nothing dropped),
// DecodeSnapshots (exported state to restores), and RunAgent, the one stateful DoFn keyed by
// entity key that puts the activation core (package agent) on Beam.
//
// # The stateful step
//
// RunAgent only hands one input or firing of a key to the one step of package agent/drive
// (drive.Core.Step, which the fast path and the in-memory driver also run), over an
// host.Batch of the key's cells, then emits the outputs, writes the cells the step changed
// once, changes the ordering buffer and sets or clears its timers; every decision is in the
// core. Its one output carries (kind, bytes) pairs that a fused ParDo splits into
// intents, traces, final replies, snapshots and dead letters, each a PCollection<[]byte> of
// deterministically serialized messages.
//
// # One timer family
//
// A DoFn with two or more timer families hangs on Prism (even on bounded input), and Flink's
// Go support has no processing-time timers. So RunAgent has exactly one event-time timer
// family, "agent.v1", and tells its timers apart by tag: "deadline" (a suspension's deadline
// and its escalations), "ttl" (the idle-key garbage collection), "order:<ms>" (the event-time
// ordering of a bucket, below), "burst:<ms>" (the end of a burst's window, package agent/burst).
// Event-time deadlines follow the watermark, so sources must advance it while idle. A test
// fails if a second family appears.
//
// # Ordering
//
// Beam does not order a key's elements. With EventTimeOrder (the default) each envelope is
// appended to the key's ordering buffer (a bag) and an event-time timer is set at its event
// time rounded up to OrderResolutionMs; when the watermark passes it, every buffered envelope
// up to that time is handed to the core in event-time order (ties by bytes), interleaved with
// the key's deadline and TTL timers at their own event times. The armed core timers are kept
// in the buffer too, and the Beam timers "deadline" and "ttl" only wake the key. Package
// agent/drive specifies these semantics and runs them in memory; the differential tests hold
// RunAgent to it byte for byte. The order, and so every output, is the same on every run and
// runner. The buffer's backlog is rewritten as one packed element per firing, so a firing
// costs one read, one clear and one add however long the backlog. A bounded run (where the
// watermark jumps to the end) reads the backlog once per bucket; a coarser resolution batches
// more envelopes per firing. ArrivalOrder skips the buffer for sources that already deliver a
// key in order.
//
// Pipelines holding RunAgent turn Prism's bundle splitting off (PrismNoSplit): Prism's splits
// let two bundles of one key run at once, and the later commit erased the other's writes.
// RunAgentBatch is the bounded fast path: a GroupByKey and the driver in one ordinary DoFn,
// which runs a few groups of a bundle's keys at once and emits their outputs in order from
// the bundle's goroutine (docs/drive.md).
//
// # Model calls in flight
//
// A firing that waits on the model in its own call would make every other key of its bundle
// wait: Prism hands a stateful stage all its ready keys in one bundle, and the SDK calls a
// DoFn for one element or timer at a time. With Options.ModelConcurrency above 1 (by default
// the hosted model's cap on calls in flight; 1 with an agent's own in-process model) a
// firing with due envelopes starts its step on its own goroutine over a copy of the key's
// state and sets the key's timer "await:<n>" at its own time; the step's effects are carried
// out in a later call of the same key, through that call's state, timers and emitters, with
// the firing's timestamp, and only if the key's state is still what the step read. The
// outputs, their timestamps, the state and the timers are those of the firing run in its
// own call, whatever the concurrency and the order in which calls complete. At most that
// many steps of one RunAgent run at once in a worker process; the fast path shares the same
// slots. What each call does about its key's running step is keysched.Decide (package
// internal/keysched); the steps live in a table the step's DoFn instances in a process share
// from Setup to Teardown. The assumption about a runner that moves keys between workers
// (Dataflow): a key's state and timers move with it, the table does not; a step started on
// the old worker is run again from the committed state on the new one, and dropped if the
// key comes back (TestKeyMovesWhileItsStepRuns). docs/drive.md has the details.
//
// Long-term memory (Options.MemoryStore, host.Deps.LongTermMemory) is a reference in the
// options, never an opened store in the graph: the first RunAgent instance set up in a worker
// process opens the store it names (ltm/backend), every instance in the process using that
// reference shares it, and the last one torn down closes it.
//
// Restores (DecodeSnapshots) are applied when they arrive, before the key's buffered
// envelopes, and only into a key without state.
//
// # The end of a bounded input
//
// With Options.AtEnd AtEndPark and Options.InputEndMs (the input's last event time, which
// pipeline.Run reads from the input files before it builds the pipeline), a key still
// suspended when the input ends is parked instead of failed closed: the step fires no core
// timer after InputEndMs, and the first firing after it (one the final watermark alone
// brings) writes the key's state to the snapshots output with request id
// drive.ParkedRequestID and disarms the key's timers (agent/drive specifies it; the Driver
// and RunAgentBatch do the same). DecodeParked restores exactly those snapshots into the
// next run. In arrival order the deadline's firing after the end parks the key and nothing is
// cleared: on Prism a cleared timer comes back as a firing at time 0. The zero value of
// AtEnd keeps failing closed; streaming inputs never park.
//
// # --update contract (stable API)
//
//   - Scope "RunAgent" and the DoFn type transforms.runAgentFn: the step's unique name is
//     "RunAgent/transforms.runAgentFn". Renaming the package or type renames the transform.
//   - State ids: "agent_state.v1", one Beam value cell of []byte holding AgentStateCells
//     (every logical cell of statecodec and host.CellInbox, byte for byte); "order_buffer.v1",
//     a bag of []byte frames. Coders are Beam's standard bytes coder, never a Go-specific or
//     proto coder.
//   - Timer family "agent.v1" with the tags above (and "await:<n>", unique to each step run
//     apart from its bundle).
//   - The step's input is KV<bytes, bytes>; its output KV<varint, bytes>.
//   - Only for an agent with agent.Definition.Shards above 1: scope "Shard" and the DoFn
//     type transforms.shardFn, which moves each external event to its entity's sub-key
//     (drive.Route) before the step (and before RunAgentBatch's grouping). An agent without
//     shards has no such transform, so its graph is unchanged.
//   - A shadow agent (ShadowOptions, shadow.go) adds, and changes nothing of the above: the
//     same step in the scope "Shadow" ("Shadow/RunAgent/transforms.runAgentFn", its own
//     state and timers under the same ids), and the comparing step
//     "ShadowCompare/transforms.compareShadowFn" with the value cell "shadow_compare.v1"
//     (ShadowCompareState) and the timer family "shadow_compare_t.v1";
//     testdata/update_manifest_shadow.json pins that pipeline.
//
// testdata/update_manifest.json pins all of it, with every other transform name and the coder
// of every PCollection crossing a stateful step or a grouping, for the default and the
// sharded pipeline (pipeline.BuildManifest reads them from the pipeline proto).
// A test fails on any change unless testdata/transform_name_mapping.json maps each renamed
// transform (what Dataflow's --transform_name_mapping then gets); a changed state id, timer
// family or coder cannot be mapped, and another test proves the check bites.
//
// # State layout
//
// RunAgent keeps every cell of a key in the one Beam cell "agent_state.v1": one state read and
// at most one write per firing, whatever the path. One Beam cell per logical cell was measured
// against it and loses on every workload, because the runner's state round trips dominate;
// the figures and the cells each path touches are in docs/benchmarks.md (the throughput harness
// regenerates them). The cells and their encodings are described in docs/wire-and-state.md.
package transforms
