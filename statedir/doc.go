// Package statedir keeps a streaming run's keyed state across restarts on a runner whose
// workers run in the launching process (Prism, embedded): `beamagents run --state_dir DIR`.
// The rules are in docs/pubsub.md ("Restarts that keep state").
//
// A Capture is the process-local record a draining RunAgent writes every live key's state
// into; Begin and Commit move it to and from DIR.
//
// Invariants:
//   - A key's state is written in the snapshot format an export emits (StateSnapshot:
//     counter, memory, replay cache, continuation, pending intents and inbox, blobs
//     verbatim), and the envelopes the key had not run yet (its ordering buffer) as binary
//     AgentEnvelopes: the restart reads them with the pipeline's own restore and file input.
//     A directory an earlier build wrote holds the inbox as envelopes instead; restored,
//     they queue again in the same order.
//   - A drain is committed whole or not at all: its files go into a new generation directory,
//     each written to a temporary name, synced and renamed, and only then does the marker
//     (drain.json, replaced atomically) name that generation as drained. A run that stops
//     before that leaves the marker saying "running" and the previous generation in place.
//   - Begin reports when the last run's drain did not complete: what changed since the last
//     completed drain is lost.
//   - In a Capture the last record of a key wins; a key's records come from its own calls,
//     one at a time.
package statedir
