// Package drive runs an agent over one key's inputs in memory, exactly as the Beam step
// RunAgent (package transforms) runs it with event-time ordering, and holds the plain-Go
// semantics both share. It is the executable specification of RunAgent: the differential
// tests run generated traffic through RunAgent on a Beam runner and through Driver and
// require the same bytes out.
//
// # What a key sees
//
// A key's inputs are envelopes (external events, tool results, approvals, export requests)
// and restores (StateSnapshots, RestoreValue). Its outputs are the core's (package agent):
// intents, traces, final replies, snapshots and dead letters, each serialized
// deterministically (Marshal) and tagged by kind (records.OutIntent … records.OutDeadLetter).
//
//   - Restores come first. A restore is applied when it arrives, before any envelope of the
//     key runs, and only into a key without state (a second restore of a key is refused with
//     a restore_refused dead letter). A restored suspension arms its deadline, and every
//     restored key its idle TTL.
//   - Envelopes run in event-time order, ties broken by their bytes; two deliveries of the
//     same bytes both run, one after the other. Arrival order never matters.
//   - The key's two core timers, the deadline of a suspension (host.TagDeadline: escalate,
//     then fail closed) and the idle TTL (host.TagTTL: drop memory and replay cache), fire at
//     their own event time between envelopes: a timer at t fires after every envelope with
//     event time ≤ t and before every envelope after t. Two timers at the same time fire
//     deadline first. A timer armed by an input fires after it even when it is due at once.
//   - Every input is atomic (host.Activate, host.Fire, host.Restore) and sees what the
//     inputs before it committed.
//   - With the agent's bursts (burst.Rule) an external event begins a burst: the key's
//     external events within its window (up to its bounds) run with it as one activation
//     (host.Batch.ActivateBurst), in its place, once the watermark has passed the window; a
//     firing before that stops at the burst's first event and sets the timer BurstTag at the
//     window's last millisecond. The inputs after the first event run after the burst.
//   - At the end of a bounded input the watermark passes every time, so the remaining timers
//     fire in event time until none is armed: suspensions escalate and then fail closed, idle
//     keys lose their memory and replay cache. Snapshots are what export requests saw.
//   - Unless the key parks (Core.Park, for a bounded input known to end at Core.EndMs, its
//     last envelope's event time): then only the timers at or before EndMs fire, and the first
//     firing after it, which only the end of the input brings, emits a suspended key's state
//     as a snapshot with request id ParkedRequestID (as an export request at EndMs takes it)
//     and disarms the key's timers: no escalation, no dead letter. A key that is not suspended
//     emits nothing. The end must be known before the input runs: a firing cannot tell the
//     final watermark from the input's own event time passing a deadline.
//
// Outputs therefore depend only on the inputs' bytes and event times, never on arrival order,
// on how the runner bundles or batches them, nor on the ordering resolution.
//
// # How RunAgent does it on Beam
//
// RunAgent keeps an ordering buffer (a bag of frames, appendFrame) per key. An arriving
// envelope is appended and an event-time timer "order:<bucket>" is set at its event time
// rounded up to the resolution (bucketOf). A firing of any timer at time T (Core.Firing) takes
// the buffered envelopes with event time ≤ T (splitBuffer, sortDue) and interleaves them with the
// core timers due by T, each at its own time, in one host.Batch. The core timers are kept in
// the same buffer (AppendTimers), not only as Beam timers: a Beam firing cannot see the
// key's other timers, and a runner may deliver several of a key's timers in one bundle, so
// the buffer is the truth and the Beam timers ("deadline", "ttl", set to the armed times by
// timerChanges) only wake the key; a Beam timer whose core timer moved finds nothing due. Driver
// replays the same mechanics in memory: the Beam timers in firing order, the buffer's content
// (its envelopes, held decoded in processing order, and its core timers), the committed
// cells.
//
// One function holds this choreography: Core.Step answers one input or one firing of a
// key, given its committed state and, for a firing, the buffer's due envelopes and core
// timers, with the key's effects (outputs, state, buffer changes, Beam timer operations).
// RunAgent carries them out through Beam state and timers, Driver on its in-memory image.
// This package alone encodes the buffer: RunAgent hands a firing its bag as read
// (ReadBuffer) and gets the bag's changes back (Effects.BagOps; Rebased for a step run
// apart from its bundle while envelopes arrived).
//
// With transforms.ArrivalOrder RunAgent skips the buffer and runs each envelope as it arrives;
// that order is the runner's, and this package does not specify it.
//
// docs/drive.md tells what the differential tests run and found, and how the bounded fast
// path (transforms.RunAgentBatch) and offline replay (package replay) use the driver.
package drive
