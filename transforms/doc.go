// Package transforms holds the Beam transforms of the runtime: DecodeEnvelopes (raw records
// to keyed envelopes, undecodable input to envelope_invalid dead letters, nothing dropped),
// DecodeSnapshots (exported state to restores), and RunAgent, the one stateful DoFn keyed by
// entity key that puts the activation core (package agent) on Beam.
//
// # The stateful step
//
// RunAgent only reads the key's cells, calls agent.Activate, agent.Fire or agent.Restore,
// writes the cells that changed, sets or clears timers and emits the outputs; every decision
// is in the core. Its one output carries (kind, bytes) pairs that a fused ParDo splits into
// intents, traces, final replies, snapshots and dead letters, each a PCollection<[]byte> of
// deterministically serialized messages.
//
// # One timer family
//
// A DoFn with two or more timer families hangs on Prism (even on bounded input), and Flink's
// Go support has no processing-time timers. So RunAgent has exactly one event-time timer
// family, "agent.v1", and tells its timers apart by tag: "deadline" (a suspension's deadline
// and its escalations), "ttl" (the idle-key garbage collection), "order:<ms>" (the event-time
// ordering of a bucket, below). Event-time deadlines follow the watermark, so sources must
// advance it while idle. TestOneTimerFamily fails if a second family appears.
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
// RunAgentBatch is the bounded fast path: a GroupByKey and the driver in one ordinary DoFn.
//
// Restores (DecodeSnapshots) are applied when they arrive, before the key's buffered
// envelopes, and only into a key without state.
//
// # --update contract (stable API)
//
//   - Scope "RunAgent" and the DoFn type transforms.runAgentFn: the step's unique name is
//     "RunAgent/transforms.runAgentFn". Renaming the package or type renames the transform.
//   - State ids: "agent_state.v1", one Beam value cell of []byte holding AgentStateCells
//     (every logical cell of statecodec and agent.CellInbox, byte for byte); "order_buffer.v1",
//     a bag of []byte frames. Coders are Beam's standard bytes coder, never a Go-specific or
//     proto coder.
//   - Timer family "agent.v1" with the tags above.
//   - The step's input is KV<bytes, bytes>; its output KV<varint, bytes>.
//
// testdata/update_manifest.json pins all of it; TestUpdateManifest compares the built
// pipeline against it.
//
// # State layout, decided by measurement
//
// The core reads and writes six logical cells. Two physical layouts were measured with the
// throughput harness (BenchmarkThroughput, N = 10,000 envelopes, Prism, scripted model):
// one combined cell per key, and one Beam cell per logical cell. Measured on
// 2 shared cores (other work running), one run each, same binary:
//
//	                          envelopes/s  state reads/act  writes/act  bytes written/act
//	K=10     combined/event     2,664          0.20           1.30          2,320
//	K=10     separate/event     2,326          0.51           1.41          2,319
//	K=10     combined/arrival   1,699          1.00           1.00         23,072
//	K=10     separate/arrival   1,292          4.00           2.00         23,066
//	K=10000  combined/event     1,220          4.00           4.00            388
//	K=10000  separate/event       657          7.00           6.00            379
//	K=10000  combined/arrival   1,380          2.00           2.00            388
//	K=10000  separate/arrival     971          5.00           4.00            379
//	stateless baseline (decode → GroupByKey → ParDo): 42,279 (K=10), 36,011 (K=10000)
//
// Per-activation counts include the ordering buffer (one add per envelope; one read, clear
// and add per firing) and each key's idle-TTL firing at the end of a bounded run. At K=10 the
// event-time buffer batches about five envelopes per firing, so the state cell is read and
// written once for several activations; with arrival order every activation rewrites the
// key's whole replay cache (64 entries of ~350 bytes). What dominates is the Prism state API
// round trip (about 100-200 µs each, against some 25 µs of activation core per envelope),
// so the layout with the fewest round trips wins.
//
// Logical cells per path (agent.TestCellAccessPerPath pins them):
//
//	path                         cells read                                  cells written
//	reply                        continuation, seq, memory, llm_cache        llm_cache, seq
//	tool call (suspends)         + pending                                   continuation, llm_cache, memory, pending
//	event while suspended        continuation, inbox                         inbox
//	export                       seq, memory, llm_cache, continuation, pending (none)
//	resume (result to reply)     continuation, pending, memory, llm_cache, inbox   continuation, inbox, llm_cache, pending, seq
//
// With the combined layout each of these is one Beam read and at most one Beam write; with
// separate cells, as many as listed.
//
// The combined cell needs one state read and at most one write per firing whatever the path,
// against up to six reads and four writes; it writes slightly more bytes (the cells it did
// not change are rewritten with it), which on Prism costs far less than the extra round
// trips. It is the layout RunAgent uses.
package transforms
