// Package pipeline builds whole beamagents pipelines from options: a file source of
// envelopes (JSON Lines of protojson AgentEnvelopes, or varint-length-delimited binary), the
// RunAgent step of a registered agent, and one file sink per output (binary for replay,
// JSON Lines for people), and runs them on any Beam Go runner, Prism by default.
//
// Invariants:
//   - Every input record ends in exactly one output; undecodable records in dead_letters.
//   - Sinks sort their records by bytes, so the same records always make the same files,
//     and every sink writes its files, even when empty.
//   - Nothing here reads the wall clock or holds credentials: the keyring travels as a
//     reference (env:VAR or file:PATH) resolved on the workers.
package pipeline
