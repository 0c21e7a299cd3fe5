// Package negotiate decides what crosses a boundary between a producer and a stricter
// receiver of interaction values, and records each crossing. It covers two boundaries:
//
//   - the model boundary (Admitter): a provider writes JSON in its own dialect of a proposal
//     schema's provider projection, and the proposal schema's strict decoder receives it;
//   - schema boundaries (Negotiate, CheckBinding): values of one compiled interaction schema
//     (a proposal, or one case of it) go to another (a tool's declared arguments, a
//     downstream agent's input).
//
// Without explicit negotiation such boundaries end in rejection loops, fabricated fields and
// strict-mode rejections. Here every boundary is decided once, from the two schemas and an
// explicit Agreement, and every output gets exactly one outcome with a receipt.
//
// # Delta
//
// Delta compares two compiled schemas by stable id (types by kind, fields and cases by id;
// display names, field numbers and nested type ids play no part) and lists every difference
// as an Entry: MissingField, TypeMismatch (with a Mismatch: shape, representation, disjoint
// integer ranges, or the two narrowings — an integer range or a string or bytes bound the
// receiver narrows, such as i64 into u8 or 4,096 bytes into 64), ExtraField,
// NullabilityConflict, UnknownCase, MissingCase, and Moved when an explicit mapping matched
// members of different ids. Widenings (i32 into i64, 16 bytes into 4,096) are no difference:
// every integer representation travels as the same decimal string. Entries come in one
// deterministic order (kind, then producer place, then receiver place), and the delta's
// canonical document, which names both schema digests, has a digest.
//
// # Nullability
//
// The interaction wire has no null and no absent field: every declared field is present in
// every value, and the decoders refuse null for every representation. Nullability therefore
// lives in the sources. A scalar field declared with explicit presence (proto3 or proto2
// `optional`) is nullable: its producer may leave it unset, and it then crosses the wire as
// its default ("", "0", false, []) — a value the producer never chose. A NullabilityConflict
// is a matched scalar field that is nullable at the producer and not at the receiver: the
// receiver's source has no unset state, so it must take that default as a real value, which
// is the seed's required-field fabrication committed by the encoding. The reverse (a value
// always set, read by a receiver that could represent unset) is no conflict, and neither is
// presence at both ends: the wire erases it alike at every boundary, which is the interaction
// profile's rule, not a difference between two schemas. Message fields have presence at both
// ends of every boundary and a receiver cannot declare one required (proto2 `required` is
// outside the profile), so nested fields never conflict; how an unset message crosses is
// again the profile's rule (interaction's ValueOf reads an unset nested record as its
// defaults and refuses an unset nested variant). Provider text that omits a field or writes
// null is refused by canonicalization. Presence is not part of a schema digest, so two
// schemas with equal digests can still conflict; gate 1 checks the delta as well.
// No transformation resolves a conflict (whether the value was set is already lost), so it
// is accepted only under BEST_EFFORT with the receiver's consent, as a warning on each
// receipt whose output carried the field.
//
// # Gates and protocols
//
// Evaluate runs the seed's decision boundary in its order and returns a Manifest (verdict,
// deciding gate, protocol in force, directive, both schema digests, the delta digest, and a
// digest over all of it and the agreement):
//
//  1. equal schema digests and an empty delta: SCHEMA_COMPATIBLE;
//  2. no blocking entry (every entry but MissingCase blocks): SCHEMA_COMPATIBLE;
//  3. no protocol agreed (and no AllowImplicit): NEGOTIATION_REQUIRED;
//  4. BEST_EFFORT with the receiver's consent: BEST_EFFORT_ALLOWED;
//  5. otherwise TRANSFORMATION_REQUIRED, under the agreed protocol (TRANSFORM_ALL if none).
//
// The seed's second question (is the delta known?) always has the answer yes here: both
// schemas are compiled, so the delta is computed, never guessed. Unlike the seed's sketch,
// gate 2 counts extra fields: every receiver here is closed, so an
// extra field alone refuses every output (the seed's strict mode rejection). Negotiate and
// CheckBinding turn the manifest into a build decision: NEGOTIATION_REQUIRED refuses
// (ErrNegotiationRequired); FAIL_FAST at gate 5 refuses any non-empty blocking delta
// (ErrFailFast); TRANSFORM_ALL, and BEST_EFFORT without the receiver's consent, refuse a
// delta holding entries no lossless transformation resolves (ErrUntransformable). Each
// refusal lists the entries behind it, so the producer knows exactly what to change.
//
// # Transformations
//
// Boundary.Convey carries one value across with transformations that are lossless for the
// receiver and never fabricate: it drops extra fields the agreement declares droppable (and
// no others), moves fields and cases by the agreement's explicit stable-id mapping, and
// narrows a value to the receiver's representation only when the actual value fits (else
// that output is refused with ErrRefused and a narrow.* rule; nothing is clamped or cut). A
// missing field is never filled. Under BEST_EFFORT the same applies and outputs that still
// cannot conform are refused one by one. The result is rendered as the receiver's canonical
// document and admitted by the receiver's strict decoder before anything is returned.
//
// # Canonicalization
//
// Canonicalize turns the JSON a provider returned under the provider projection into the
// canonical value document: it admits whitespace, any member order, a missing envelope, a
// missing final LF, any valid escaping, and integers written as JSON number tokens or
// decimal strings, and refuses everything else (see Canonicalize). Integers are read from
// their token text, never through float64: fractions, exponents and out-of-range values are
// refused, not rounded. Duplicate keys are refused at any depth. Nothing is invented: a
// missing field or a null is refused. The strict decoder then admits the result. Admitter
// applies it per protocol: FAIL_FAST, and no protocol, admit only the exact canonical
// document.
//
// # Receipts
//
// Every output that crosses a negotiated boundary, admitted or refused, gets a Receipt:
// producer and receiver digests (the producer of a model boundary is its provider dialect,
// DialectDigest), the case a binding is scoped to, protocol, verdict, manifest and delta
// digests, the transformations applied, SHA-256 of the input and of the output bytes, and the
// refusal's reason. Receipt.Attributes renders it as trace attributes under
// beam_agents.conformance.* with a receipt digest; ReceiptFromAttributes reads it back and
// checks that digest, and Disposition tells a receiver to accept, warn or reject without
// re-deriving anything.
//
// # Invariants
//
//   - Nothing is fabricated: no field is filled, no value rounded, clamped or cut, no extra
//     field dropped without a declared drop, no unknown member ignored.
//   - One outcome per output: an admitted value with a conforming receipt, or one typed
//     refusal with a non-conforming receipt. Nothing here retries.
//   - Everything a boundary admits has passed the receiver's strict decoder.
//   - Determinism: no clock, no randomness, no map order reaches an output; the same inputs
//     give the same deltas, manifests, documents and receipts byte for byte.
//   - Errors are *Error values with a stable Code and Rule (match them with errors.Is or
//     errors.As, never on text); an underlying *interaction.Error stays reachable through
//     Unwrap. Error() is one line.
//   - Boundaries, admitters and deltas are immutable and safe for concurrent use. Work is
//     bounded by the inputs: a delta by the pairs of types (at most MaxTypes squared) and
//     their members, canonicalization by MaxInputBytes.
package negotiate
