// Package keysched decides, for one call of a keyed stateful step, what to do about the key's
// step that may be running apart from its bundle, and keeps those steps: the scheduler of
// RunAgent (package transforms) with model calls in flight (Options.ModelConcurrency > 1),
// without Apache Beam.
//
// A call is an element or a timer firing of one key in one bundle (an epoch). A key may have
// one job: a step started by an earlier firing on its own goroutine over a copy of the key's
// state, whose effects a later call of the same key carries out. Decide answers, from the
// call and what the Table says of the key's job, one Action: run the call's own step, buffer
// the element, join the job, leave the key be, pass it over to a later bundle, settle the
// job first, or freeze. The shell (package transforms) reads state, asks Decide, and carries
// the answer out; the table test in decide_test.go is the specification, one row per case.
//
// Invariants:
//   - Decide is a pure function of its arguments: no clock, no randomness, no shared state.
//   - A key has at most one job in a Table; a job runs its firings one after another, each
//     over the state the one before it left, and takes no firing once it ran its last.
//   - A job's effects are carried out in a call of its own key, and only if the key's state is
//     still what the job read; otherwise the job is dropped and the call runs from the state.
//     Dropping a job, or losing a Table, therefore costs only a rerun, never an output or a
//     duplicate: every decision a job made is in the state it would commit.
//   - A Table belongs to the DoFn instances of one step in one process: Acquire it in Setup and
//     Release it in Teardown; the last Release frees it. It keeps at most MaxKept finished jobs
//     of keys that never came back (their key moved to another worker).
//   - At most a Table's slot count of jobs run at once (Hold); a job's panic is its Err.
//
// What a runner may move between workers (Dataflow rebalances keys): a key's Beam state and
// timers move with it, and a call for it may come to another worker, whose process holds
// another Table. The Table is process memory and does not move: a job started on one worker
// is never carried out on another. The key's await timer then fires on the new worker, finds
// no job and runs the step from the committed state, which holds every envelope the job read
// (a job commits nothing before its effects are carried out). transforms' keymove_test.go
// simulates it.
package keysched
