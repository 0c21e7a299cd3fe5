// Package interaction is the only door through which a model's output becomes data. It
// derives a closed, typed interaction schema from a protobuf message descriptor (Compile),
// decodes untrusted value documents strictly against it (Schema.Decode), reads the looser
// JSON a provider writes into the same canonical documents (Schema.ReadProvider), and projects
// the schema to JSON Schema for providers (Schema.ProviderJSONSchema). A schema compiled by
// CompilePresented is also shown to models by property names (Schema.PresentedJSONSchema) and
// reads their arguments back by stable ids (Schema.ReadPresented).
//
// The rules — which protobuf messages and fields are admitted and how they map to
// representations, the bounds, stable ids, the canonical schema document and its digests, the
// value document and its envelope, canonical JSON, the six decoding steps, the provider
// dialect, the JSON Schema projection, and every SPX-* diagnostic with its rules — are stated
// in docs/interaction.md in this repository.
//
// A value document, with one terminal LF:
//
//	{"schema":"beam_agents.interaction-value.v1","root_type_id":…,"schema_digest":…,
//	 "value":{"fields":{…}}}  or  …"value":{"case":"<case id>","fields":{…}}}
//
// # Invariants
//
//   - A Schema, its Types, Cases and Fields, and every Value are immutable and safe for
//     concurrent use.
//   - Decode admits exactly the canonical documents of values within every bound: every value
//     has one document, and a document is admitted only if it is that document.
//   - Decode, ReadProvider, ReadPresented and ValueOf never panic on any input, and allocate and work in
//     proportion to the bounded input.
//   - Errors are *Error values with a stable Code and Rule (match them with errors.Is or
//     errors.As, never on text), the JSON path of the offending value for decoding and the
//     element's full name for derivation; Error() is one line, whatever the input.
//   - A decoded value is data: decoding grants no authority and has no effect.
package interaction
