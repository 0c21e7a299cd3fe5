// Package inorder runs jobs on a few goroutines and hands what they yield back to the
// caller's goroutine in submission order.
//
// Invariants:
//   - Every value is delivered on the goroutine that calls Go, Poll or Wait, never on a job's.
//   - Values are delivered in submission order: all of a job's values after all of the
//     values of every job submitted before it, each job's in the order it yielded them.
//   - At most workers jobs (New's argument) are submitted and not yet fully delivered, each
//     on its own goroutine, and a job holding buffer values not yet delivered waits in yield
//     until it is the oldest: memory is bounded whatever the jobs yield. The oldest job
//     never waits for the others, so the runner cannot deadlock.
//   - A job that panics fails the runner: the call that reaches it returns a *PanicError
//     after delivering what the job yielded before panicking; the later jobs are stopped (their
//     yields return false) and nothing more is delivered.
//
// A Runner is used by one goroutine (it is the Beam shell's bundle-local helper: a DoFn runs
// several keys of a bundle at once and emits their outputs from its own goroutine, since a
// Beam emitter may only be called there).
package inorder
