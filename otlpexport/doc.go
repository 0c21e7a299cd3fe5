// Package otlpexport turns the runtime's TraceEvents into OpenTelemetry spans and exports them
// over OTLP (gRPC or HTTP) with the official OpenTelemetry Go SDK's exporters.
//
// Invariants:
//   - A span keeps its event's ids exactly: trace id (16 bytes), span id (8 bytes) and parent
//     span id, so the spans of an activation form the tree the events describe, and a
//     replayed activation, whose events are byte-identical, exports the same span ids.
//   - Every event attribute becomes a span attribute under the same key (the GenAI
//     conventions' gen_ai.* keys and the runtime's beam_agents.* keys); the token counts
//     gen_ai.usage.input_tokens, gen_ai.usage.output_tokens and
//     gen_ai.usage.cache_read.input_tokens become integers, as the conventions type them. The event's entity key, seq, step index and type are added as
//     beam_agents.entity_key, beam_agents.seq, beam_agents.step_index and beam_agents.event_type.
//   - An event whose ids have the wrong length is not exported: Spans reports it as an
//     *InvalidEventError (errors.Is ErrInvalidEvent) and converts the rest.
//   - Nothing here reads the clock: span times are the event's start_ms and end_ms.
//
// The exporter honours the OpenTelemetry SDK's OTEL_EXPORTER_OTLP_* environment variables
// (headers, certificates, timeouts) for everything its Options do not set.
package otlpexport
