// Package testschema is a keyed-state schema version 2 that exists only for tests: the
// version a future build of the runtime would register, used to exercise a state-schema
// upgrade end to end (an agent whose Definition.StateSchema is [V2] reads version 1 state
// through registered steps, writes version 2, and refuses nothing a version 1 build wrote).
//
// Version 2 changes one thing, in MemoryBlob: memory keys are namespaced. Every key k that
// version 1 wrote becomes [Namespace]+k; values, order, access times and the total are
// unchanged. Continuation and LlmCacheBlob keep the version 1 layout, so their steps only
// let the registry restamp them: a version bump moves every versioned message, changed or
// not, to the new version.
//
// Invariants: [V2] is complete (a step from 0 and from 1 for each versioned message, the
// 0 → 1 steps being the build's own), its steps are pure, and the memory step is a
// bijection on keys, so no entry is merged or lost. A version 1 build refuses version 2
// blobs (state_version_unsupported) and leaves them untouched.
package testschema
