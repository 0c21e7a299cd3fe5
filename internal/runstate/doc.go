// Package runstate is a streaming run's --state_dir on a runner whose workers run in this
// process (Prism): `beamagents run --state_dir DIR` and dev's state directory. Begin checks
// that the run can keep state, points its options at the last completed drain's files and
// at a new statedir.Capture; Freeze starts the drain's recording and Commit writes it
// (package statedir holds the directory format and its rules).
//
// Invariants:
//   - A run that cannot keep state is refused with a *RefusedError before anything is
//     opened: a file input, a runner whose workers are elsewhere, an explicit --restore, the
//     batch mode or arrival ordering.
//   - A last run whose drain did not finish is reported on the warning writer: what it
//     changed is lost, and the run restores the last completed drain (or nothing).
//   - A nil *Run does nothing: a run without --state_dir goes through the same calls.
package runstate
