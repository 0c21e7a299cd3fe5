// Package effector executes signed ToolIntents and turns their outcomes into AgentEnvelopes
// (ToolResult, or Approval for a human decision) on the intent's entity key, from files
// (ReadIntents, HandleAll, WriteResults) or as a Pub/Sub service (Serve). Its dedup stores
// are in package effector/store, its tools in effector/tool and effector/mcptool; none of
// them links Apache Beam. Its approvals are decided in package console. The rules are in
// docs/effector.md.
//
// Invariants:
//   - Order per intent: verify the signature (intent.Mode), refuse an expired intent under
//     the Expiry policy (ExpiryClock: expires_at_ms against the effector's clock, the
//     default; ExpiryEmission: the intent's window from its emission as its transport
//     recorded it, bounded by MaxLag), list APPROVAL intents for a decision (never
//     executed), claim the intent id in the durable Store, execute, record the completion,
//     publish.
//   - Every refusal is a ToolResult (EXPIRED, or REJECTED whose error_message starts with a
//     stable reason) and has its own counter; nothing is dropped. Input that is not an
//     intent is counted as malformed and reported.
//   - A tool runs at most once per intent id while completions are recorded: a redelivered
//     intent with a recorded completion for the same call (the same intent.Digest) gets the
//     recorded bytes again; another call with a recorded id is REJECTED intent_id_conflict
//     and never runs. Every result and decision is bound to its intent and signed. The one window left —
//     a crash between a tool's effect and its completion record — reruns the tool after the
//     lease; tools idempotent on the intent id close it.
//   - Arguments are decoded strictly in the producer's schema and negotiated to the tool's
//     declared schema before the tool runs; a tool never sees arguments its schema refuses.
//   - Results carry event_time_ms = completed_at_ms = the intent's event time at completion:
//     the effector's clock under ExpiryClock; created_at_ms plus the time since the intent's
//     emission under ExpiryEmission. Decisions carry it the same way.
package effector
