// Package streamrun runs a pipeline with a Pub/Sub input in this process until it is
// interrupted (`beamagents run --input_subscription …`): the first SIGINT or SIGTERM drains it
// (the source stops pulling, in-flight bundles finish and their messages are acknowledged,
// then the job ends as a bounded one does), a second one stops it at once. A status line
// shows what it did so far; with a state directory (runstate) the drain records every key.
//
// Invariants:
//   - Only a completed drain commits the state directory; a run stopped before its drain
//     finished ends with ErrStopped, and its unacknowledged messages are redelivered.
//   - The counters are printed only for a run that drained.
package streamrun
