// Package stream decodes a model's streamed output chunk by chunk against a compiled
// interaction schema, refusing at the first byte that proves the document can never be
// admitted, so the caller can cancel the provider call, while accepting exactly what the
// whole-document decoder accepts.
//
// A Grammar is compiled once per interaction.Schema; a Decoder per stream:
//
//	g, err := stream.Compile(schema) // once
//	d := g.NewDecoder()              // per provider response
//	for chunk := range chunks {
//		if o := d.Push(chunk); o.State() == stream.Refused {
//			cancelProvider()
//			return o.Refusal()
//		}
//	}
//	o := d.Finish() // Accepted with the value, or Refused
//
// The outcome states, the two layers that judge each byte (a structural scanner, then the
// typed grammar compiled from the schema), the closed STREAM-* refusal vocabulary and the
// bounds are stated in docs/streaming.md in this repository.
//
// Invariants:
//
//   - Only Finish accepts, and only by running interaction.Schema.Decode on exactly the
//     buffered bytes: no defect of the incremental layers can admit a value the whole decoder
//     refuses.
//   - Early refusal is conservative: every rule of both layers is implied by the whole
//     decoder's, so a byte is refused only if no continuation could be admitted. Every strict
//     prefix of an admitted document is Incomplete.
//   - Incomplete carries no code and no text; Accepted and Refused are terminal and sticky:
//     later Push, Finish and Cancel calls return the same outcome.
//   - The outcome (state, code, offset and value) for a byte sequence does not depend on how
//     it is chunked.
//   - Work is linear in the bytes received: each byte is judged a bounded number of times and
//     never rescanned from an earlier point, and the buffer never holds more than
//     MaxStreamBytes. Where the per-byte result of a span is known in advance it is taken at
//     once, with the same outcome, offset, message and grammar work: within a chunk, whole
//     ops (a literal present whole, string content with its escapes and closing quote, an
//     integer, a case id, a bytes array eight bytes at a time); across one-byte pushes, a fast
//     run in which Push appends a byte and checks it against what the run expects (the next
//     byte of a literal or case id, string content, digits), the state catching up when the
//     run ends.
//   - A schema one of whose documents could hold more than MaxStreamStringTokens string
//     literals does not compile (ErrUnstreamable), since the token bound would then refuse an
//     admitted document.
package stream
