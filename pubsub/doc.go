// Package pubsub feeds RunAgent from Google Cloud Pub/Sub and publishes its outputs there,
// on every Beam runner: an unbounded splittable reader with unary Pull for Prism and Flink
// (Beam's pubsubio runs only on Dataflow, which this package selects there instead), a
// dedup step that keeps a second delivery from activating the agent again, and one
// publisher per output topic. The rules are in docs/pubsub.md.
//
// Invariants:
//   - A message is acknowledged only after the bundle that emitted it committed: when the
//     reader resumes from that bundle's checkpoint (the residual carries the ack ids), and at
//     the bundle's finalization. A crash before that redelivers. (What a runner holds after
//     the commit is as durable as the runner: on Prism, in memory.)
//   - While the reader holds a message its ack deadline is extended; a reader that stopped
//     running releases what it holds, so Pub/Sub redelivers at once.
//   - A message's event time is the envelope's event_time_ms, else the configured attribute,
//     else the publish time. The watermark follows event time and, while the subscription is
//     idle, advances from the newest event time at the wall clock's pace, so event-time
//     deadlines fire on a quiet stream.
//   - A malformed message is published to the errors topic byte for byte (with its
//     attributes and the reason) and acknowledged: never dropped, never redelivered forever.
//   - A delivery id (the envelope id attribute when set, else the message id) seen for the
//     same entity key within the dedup window is dropped, counted and traced.
//   - Publishing is part of the bundle: it finishes when Pub/Sub accepted every message; an
//     error fails it, so the runner retries and nothing is dropped.
package pubsub
