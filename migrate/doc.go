// Package migrate owns state_schema_version: the version of the three keyed-state messages
// (MemoryBlob, Continuation, LlmCacheBlob) and the registered steps that upgrade a decoded blob
// of an older version to the current one.
//
// Invariants:
//   - [CurrentStateSchemaVersion] is the current version of this build's own schema,
//     [Default]: the version every runtime constructor stamps and every encoder writes unless
//     an agent names a registry of its own (agent.Definition.StateSchema, built with
//     [NewRegistry] on [Steps]), whose current version is then stamped instead. It equals the
//     newest frozen golden corpus directory (golden/v<N>/).
//   - Only the messages listed by [Versioned] carry a migratable version. The wire messages
//     (ToolIntent, ToolResult, TraceEvent, AgentEnvelope, ActivationErrorRecord) and the
//     StateSnapshot envelope evolve additively only: a [Registry] refuses a step for them, and
//     [Migrate] refuses them with [ErrUnversioned].
//   - A registry is complete by construction: for every versioned message and every version v
//     below its current version there is exactly one step v → v+1 ([NewRegistry] refuses
//     anything else).
//   - Migration runs on a decoded message, after a successful parse with the current bindings.
//     A breaking change therefore never retypes or reuses a field number: a removed field is
//     reserved, its bytes arrive as unknown fields, and the step that consumes them moves the
//     data to its new place.
//   - Version 0 means pre-versioned (the v1 field layout written without a stamp, or a
//     zero-valued blob). It is upgraded by its own registered step and reported through
//     [Result.PreVersioned]; it is never read as if it were version 1.
//   - A version above the current one is refused with [ErrFutureVersion] and the message is left
//     untouched: an older binary never truncates, downgrades or overwrites state written by a
//     newer one. Upstream, such a blob becomes a dead letter with the key's state unchanged.
//   - Migration is idempotent: a message at the current version is returned unchanged, and a
//     failed migration leaves the message exactly as it was (steps run on a copy).
//   - Steps are pure functions of the message: no clock, no I/O, no randomness.
//
// Adding version N+1: write the breaking change in protos/ (new numbers, old ones reserved),
// add one step from N for every versioned message in steps.go, bump
// [CurrentStateSchemaVersion], add golden/v<N+1>/ builders and write its blobs with
// golden/cmd/goldengen. golden/v<N>/ stays frozen as the outgoing version's corpus, and the
// compatibility test migrates it to N+1. docs/wire-and-state.md states these rules with the
// rest of the wire and state contract.
package migrate
