// Package effectorrun is the machinery of `beamagents effector` (and the effector inside
// dev): building an effector from the command's settings, its approval console, a files run
// over intent files and a service run between Pub/Sub topics, and the counters printed at
// the end.
//
// Invariants:
//   - A files run handles every intent of its input once and writes the results with the
//     approval decisions taken meanwhile, in one go; a run whose approvals nobody can decide
//     (no console) wrote its outputs and ends with an *UndecidedError saying how to decide
//     them; intents whose tools no registered agent provides are held back, nothing
//     recorded for them.
//   - The dedup store is opened once per run; a bbolt store another process holds locked is
//     refused with a clear error once the store's lock timeout passes.
//   - The approval console always needs an identity to read (approver header or users).
package effectorrun
