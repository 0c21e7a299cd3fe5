// Package interaction is the only door through which a model's output becomes data. It
// derives a closed, typed interaction schema from a protobuf message descriptor, decodes
// untrusted value documents strictly against it, and projects it to JSON Schema for
// providers.
//
// # Source language
//
// The checked source is a compiled protobuf message (protoc or buf has checked it). Stable
// identities come from the options in beam_agents/v1/interaction_options.proto: every record
// or variant message carries (beam_agents.v1.type_id); every field and every variant case
// carries (beam_agents.v1.field_id); (max_bytes), (minimum) and (maximum) tighten bounds.
// Stable ids are 1-128 bytes of [A-Za-z0-9._-] starting with a letter or digit.
//
// A message without a oneof is a record: a closed set of fields in declaration order (a
// record may have no fields). A message whose only members form exactly one oneof, every
// member of which is a message, is a variant: each oneof member is a case (its field_id is
// the case's id) carrying the fields of its message (the payload, which needs no type_id and
// must itself be a record). Admitted fields and the representation each maps to:
//
//	bool                        bool
//	int32, sint32, sfixed32     i32     [-2^31, 2^31-1]
//	int64, sint64, sfixed64     i64     [-2^63, 2^63-1]
//	uint32, fixed32             u32     [0, 2^32-1]
//	uint64, fixed64             u64     [0, 2^64-1]
//	string                      string  at most 4,096 UTF-8 bytes
//	bytes                       bytes   at most 4,096 elements
//	message with a type_id      nested  that record or variant
//
// The zigzag and fixed-width encodings of one width are the same representation: the wire
// carries values, not protobuf encodings. (minimum) and (maximum) are canonical decimal
// strings inside the representation's range; a u8 is a uint32 with maximum "255", and a
// usize (the width of a size) is a u64. (max_bytes) tightens the 4,096 of a string or bytes
// field. proto2 and proto3 optional fields are admitted: presence is not part of a value,
// every declared field is present in every value, and CopyTo sets them all.
//
// Refused with SPX-Z202, naming the rule and the element's full name (see the Rule
// constants): repeated and map fields, float and double, enums, groups, proto2 required
// fields and explicit defaults, google.protobuf messages (well-known types), messages with
// extension ranges, missing, malformed or duplicate ids, a oneof beside other fields or
// several oneofs, an empty variant, a scalar or variant case payload, bounds on the wrong
// kind of field or outside the representation, cycles, more than MaxTypes records and
// variants, and more than MaxDepth type levels. Nothing is approximated.
//
// # Schema document and identities
//
// The canonical schema document (Schema.Document) is
//
//	{"schema":"beam_agents.interaction-schema.v1","root_type_id":…,"root_type_revision":…,
//	 "types":[…],"wire":{…},"nonclaims":[…]}
//
// rendered as canonical JSON (below) with one terminal LF. types lists every record and
// variant once, dependency-first (each after the types it references; the root last):
// {"stable_id","kind":"record","fields":[…]} or {"stable_id","kind":"variant","cases":
// [{"stable_id","fields":[…]}]}; a field is {"stable_id","type":{"kind":"scalar",
// "representation",…bounds} | {"kind":"nested","stable_id"}} with "minimum"/"maximum" as
// decimal strings for integers and "max_bytes" for string and bytes. Display names never
// appear. root_type_revision is "sha256:" + hex SHA-256 of
// "beam_agents.interaction-schema.v1 root_type_revision\x00" followed by the canonical
// {"root_type_id":…,"types":[…]}: renames and renumbering leave it unchanged, any structural
// change changes it. The schema digest is the same over
// "beam_agents.interaction-schema.v1 schema_digest\x00" and the whole document. The
// document and the provider projection each have an output budget of MaxSchemaBytes
// (SPX-Z203). Verify re-derives a schema and requires a supplied document to equal it byte
// for byte (SPX-Z204).
//
// # Value documents
//
//	{"schema":"beam_agents.interaction-value.v1","root_type_id":…,"schema_digest":…,
//	 "value":{"fields":{…}}}  or  …"value":{"case":"<case id>","fields":{…}}}
//
// plus one terminal LF. A fields object holds every declared field exactly once, keyed by
// stable id, in declaration order. bool is true/false; integers are canonical decimal
// strings ("0", or an optional '-' and digits without a leading zero; never JSON numbers, so
// no consumer rounds them); string is a JSON string; bytes is an array of integers 0..255;
// nested is the nested type's value object. Canonical JSON has no whitespace, and escapes
// strings by one rule: '"' and '\' with a backslash, U+0008, U+0009, U+000A, U+000C and
// U+000D as \b \t \n \f \r, other code points below U+0020 as \u00xx (lowercase hex), and
// everything else (U+007F and all non-ASCII included) as raw UTF-8. So every value has exactly
// one document, and Decode admits a document only if it is that document (see Decode for the
// six steps and their diagnostics).
//
// # Provider projection
//
// ProviderJSONSchema describes the whole value document, envelope included (what a model is
// asked to produce), as a self-contained JSON Schema draft 2020-12 document: the envelope's
// schema, root_type_id and schema_digest as consts, each type under $defs by stable id and
// referenced with $ref, every object closed (additionalProperties false) with a full
// required list, a variant as oneOf one alternative per case pinning "case" with const,
// integers as strings with the canonical decimal pattern and x-representation, x-minimum and
// x-maximum, strings with maxLength (code points, a looser bound than the UTF-8 bytes in
// x-max-bytes) and bytes as a bounded array of integers 0..255. Every document Decode admits
// validates against it. It cannot express everything Decode enforces (byte lengths, integer
// bounds, canonical key order and escaping), so a provider may still produce a document the
// projection accepts and Decode refuses; Decode never reads the projection, so a provider's
// limitation can only cause a refusal, never an admission.
//
// # Invariants
//
//   - A Schema, its Types, Cases and Fields, and every Value are immutable and safe for
//     concurrent use.
//   - Decode and ValueOf never panic on any input, allocate and work in proportion to the
//     bounded input, and admit exactly the canonical documents of values within every bound.
//   - Errors are *Error values with a stable Code and Rule (match them with errors.Is or
//     errors.As, never on text), the JSON path of the offending value for decoding and the
//     element's full name for derivation; Error() is one line, whatever the input.
//   - A decoded value is data: decoding grants no authority and has no effect.
package interaction
