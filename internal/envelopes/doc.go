// Package envelopes makes the AgentEnvelopes that come from outside a run (an approver's
// decision, a signal, a redriven dead letter) and delivers them the two ways a run reads
// them: a JSON line appended to a file, or binary messages on an input topic.
//
// Invariants:
//   - A decision is signed over the intent it decides and bound to it (intent.SignApproval);
//     a signal is signed when a keyring is given. Nothing here reads the clock: event times
//     are the caller's.
//   - Messages on a topic are the deterministic binary encoding, ordered by the envelope's
//     entity key (wire.OrderingKey), as the pipeline's own publishers order them; Publish
//     returns only once every message is accepted, or the first error.
//   - A line is protojson, one envelope per line, appended whole.
package envelopes
