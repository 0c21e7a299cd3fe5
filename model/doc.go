// Package model is the runtime's view of a language model: a request (messages, the proposal's
// provider JSON Schema, sampling parameters and the identity of the asking activation step), a
// response (text and token usage), the Model interface providers implement, the optional
// Streamer and ToolStreamer interfaces for providers that stream (proposals, native-tool
// answers), and the replay-cache key.
//
// Invariants:
//   - A Request is plain data. CacheKey is a pure function of it: SHA-256 over a canonical,
//     versioned encoding of the model id, messages, schema digest, sampling parameters, entity
//     key, seq and step. Equal requests give equal keys on every machine and every run.
//   - Models never see keyed state; the activation core owns caching, so a cached step makes no
//     model call at all.
//   - Scripted is a replay source, not a model: it returns recorded responses from a script,
//     chosen by (entity, seq, step) or by a matching rule, and fails loudly when nothing
//     matches. It exists for tests, demos and replays without credentials.
//   - Fallback asks its models in order and moves on only when one is unavailable
//     (CodeUnavailable, CodeTimeout, CodeCircuitOpen) before any of its answer reached the
//     caller; the response names the fallback that answered and the models passed over.
package model
