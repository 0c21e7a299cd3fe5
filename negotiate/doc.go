// Package negotiate decides what crosses a boundary between a producer and a stricter
// receiver of interaction values, and records each crossing. It covers two boundaries:
//
//   - the model boundary (Admitter): a provider writes JSON in its own dialect of a proposal
//     schema's provider projection, and the proposal schema's strict decoder receives it,
//     whole (Admit) or as it streams (NewStream: pushed chunk by chunk, refused at the first
//     byte that proves it wrong, then admitted whole with the same Outcome);
//   - schema boundaries (Negotiate, CheckBinding): values of one compiled interaction schema
//     (a proposal, or one case of it) go to another (a tool's declared arguments, a
//     downstream agent's input).
//
// Every boundary is decided once, from the two schemas and an explicit Agreement: Delta lists
// the differences, Evaluate runs the five gates to a Manifest and its verdict, Boundary.Convey
// carries a value across with lossless transformations only, Canonicalize reads provider
// text (interaction.Schema.ReadProvider, then the strict decoder), and every output gets a
// Receipt. The delta kinds, the protocols TRANSFORM_ALL, BEST_EFFORT and FAIL_FAST, the gates
// and verdicts, the transformations, receipts and their trace attributes, push-style admission,
// and the error codes and rules are stated in docs/negotiation.md in this repository.
//
// # Invariants
//
//   - Nothing is fabricated: no field is filled, no value rounded, clamped or cut, no extra
//     field dropped without a declared drop, no unknown member ignored.
//   - One outcome per output: an admitted value with a conforming receipt, or one typed
//     refusal with a non-conforming receipt. Nothing here retries.
//   - Everything a boundary admits has passed the receiver's strict decoder.
//   - A streamed text is refused early only where its whole reading refuses too, and no later
//     than the value that proves it: a value of another JSON type than its field's (a number
//     where a string is declared, a string where a bool is, an object or array where a scalar
//     is) at its first byte. Its canonical form is written as it arrives — whitespace dropped,
//     strings re-escaped, a JSON number as a decimal string only where an integer field's
//     value is expected — and never repaired. A member key out of declaration order turns
//     early refusal off for the rest of that text; the admission of the whole text decides. Chunk boundaries never
//     change an outcome.
//   - Determinism: no clock, no randomness, no map order reaches an output; the same inputs
//     give the same deltas, manifests, documents and receipts byte for byte.
//   - Errors are *Error values with a stable Code and Rule (match them with errors.Is or
//     errors.As, never on text); canonicalization refusals carry interaction's rule names, and
//     an underlying *interaction.Error stays reachable through Unwrap; a streamed text's early
//     refusal is the streaming decoder's *stream.Refusal with its STREAM-* code. Error() is
//     one line.
//   - Boundaries, admitters and deltas are immutable and safe for concurrent use; a Stream
//     belongs to one text and one goroutine. Work is bounded by the inputs: a delta by the
//     pairs of types (at most MaxTypes squared) and their members, canonicalization (whole or
//     streamed) by MaxInputBytes.
package negotiate
