// Package pipeline builds whole beamagents pipelines from options: a file source of
// envelopes (JSON Lines of protojson AgentEnvelopes, or varint-length-delimited binary), the
// RunAgent step of a registered agent, and file sinks per output (binary for replay, JSON
// Lines for people), and runs them on any Beam Go runner, Prism by default. BuildFrom attaches
// the same steps to another source. Deployment, flags and upgrades: docs/deploy.md.
//
// Invariants:
//   - Every input record ends in exactly one output; undecodable records in dead_letters.
//   - No step holds a whole input or output: JSON Lines inputs are read in splits of byte
//     offsets, binary inputs streamed record by record, and with Options.Shards each output
//     is written as shards (in event-time windows with Options.Window) by many workers.
//   - The default sinks (WriteRecords, for demos, tests and replays) sort their records by
//     bytes, so the same records always make the same files, and write their files even
//     when empty; they gather each output on one worker and need a bounded input.
//   - Binary outputs are typed record files (a header naming the message type, then
//     varint-length-delimited records; docs/files.md), and the binary reader dead-letters a
//     file whose header names another type than the one it reads, reading none of its records.
//   - Every output file is written under a temporary name and renamed when complete: a file
//     under its final name is whole.
//   - The end of a bounded input parks the keys still waiting (transforms.AtEndPark), when
//     asked: Run reads the input's last event time first (InputEnd: one read of the input
//     files in the launching process), the stateful step fires no timer after it, and each
//     waiting key's state goes to the snapshots output with request id
//     drive.ParkedRequestID; Options.Resume restores exactly those into the next run. The
//     stateful step learns the end of a bounded input only as the watermark jumping to the
//     end of time, which cannot tell a deadline the input's own event time passed from one
//     only the end passes; the end read up front can. A streaming input is never parked.
//   - Execute cancels a job on a job service (Prism, universal, Flink) through the Job API
//     when its context ends, and waits for the job to stop.
//   - Nothing here reads the wall clock in the data path or holds credentials: the keyring
//     travels as a reference (env:VAR or file:PATH) resolved on the workers. (Execute names a
//     job from the clock when --job_name is empty; RunAgent's latency metric reads it.)
//   - The cost ledger (LedgerOptions) is a stateless step on the trace events after the
//     five outputs, never among them: turning it on adds steps and a sixth file pair (or
//     topic) and changes none of the others' bytes, names or transforms.
//   - A shadow agent (Options.Shadow) runs beside production over the same keyed envelopes;
//     production's outputs are byte for byte those of the pipeline without it, and the
//     shadow's go only to shadow_intents and, compared, to shadow_divergences (shadow.go).
//   - BuildManifest reads the --update contract (every transform name, stateful step and
//     boundary coder) from the pipeline proto the SDK submits.
package pipeline
