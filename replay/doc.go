// Package replay re-runs recorded traffic offline: the agent runs in memory (package
// agent/drive, RunAgent's semantics) with a model that only answers from the replay caches of
// snapshots taken after the recorded run, and each key's outputs are compared with the
// recorded ones.
//
// Invariants:
//   - No provider is ever called. A request whose cache key is not in the caches, or whose
//     entry kept only the response's digest (the recorded response was too large to keep), is
//     a miss: the model fails the step (a model_error dead letter) and the miss is reported.
//   - The token usage and answering model a trace reports (the provider's model id, the
//     fallback that answered and the models passed over) come from the recorded run's
//     LLM_CALL trace of the same (key, seq, step) when the recorded traces are given, so an
//     unchanged agent reproduces the recorded outputs byte for byte.
//   - Divergence is reported per key, first divergence only: the first miss, else the first
//     output (in the key's emission order) the recorded run does not have, else the first
//     recorded output the replay did not produce.
package replay
