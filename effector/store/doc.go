// Package store holds the effector's durable deduplication stores, keyed by intent id: Bolt,
// an embedded bbolt file for one effector process, and Redis, for a fleet of effectors
// sharing one Redis. The rules are in docs/effector.md.
//
// Invariants:
//   - A claim is exclusive until its lease ends: while one owner's claim on an id is live,
//     every other owner's Claim answers Busy; after the lease the next claimant takes it over
//     (Claim.TakenOver).
//   - A completion, once recorded, is final: Complete returns the first recorded completion to
//     every later caller, and every later Claim answers Done with those bytes.
//   - Bolt's leases follow the clock the caller passes in (nowMs); Redis's follow Redis's own
//     key expiry.
//   - Every failure is an *Error with CodeFailed; Open refuses an unusable reference with
//     CodeRef.
package store
