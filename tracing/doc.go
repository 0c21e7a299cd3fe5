// Package tracing is the trace identity the runtime shares with every other runtime of the
// beam_agents.v1 wire: how trace and span ids are derived, the span roles, and the names of
// trace attributes and of their fixed values. docs/identity.md is the contract; this package
// is its Go form, for the activation core, model providers and trace exporters alike.
//
// Invariants:
//   - Ids are pure functions of (entity key, seq) and a span's role and index: nothing is
//     carried on the wire or in state to keep a resumed activation in its trace, and any
//     runtime derives the same bytes.
//   - TraceID is the 16 bytes of a UUIDv5 in [Namespace]; SpanID the first 8 bytes of one.
//   - Attribute names are OpenTelemetry GenAI names (gen_ai.*, error.type) where the
//     conventions define the concept, and beam_agents.* for the runtime's own.
//   - A count that was not observed is absent, never "0": token counts appear only on a model
//     call whose response was decoded.
package tracing
