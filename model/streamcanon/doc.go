// Package streamcanon canonicalizes a provider's JSON text as it streams, so that every delta
// reaches the streaming decoder (interaction/stream) in the canonical value document's form
// and a refusal can cancel the provider call at the first byte that proves the proposal wrong.
//
// Invariants:
//   - The transducer never repairs a value: it only drops insignificant whitespace, re-escapes
//     strings by the canonical rule, writes integers given as JSON numbers as decimal strings
//     ("-0" as "0") and adds the schema's envelope before the first byte. Everything else is
//     passed through for the decoder to judge, so what it refuses stays refused.
//   - It is the streaming twin of negotiate.Canonicalize for provider text in declaration
//     order without an envelope, the form the provider profiles ask for. Members in another
//     order cannot be told from undeclared ones by the streaming decoder, so at the first refused
//     member key the Writer stops refusing early (Degraded); the
//     whole-text admission that decides acceptance is unchanged.
//   - Chunk boundaries never matter: the state carries partial tokens across pushes.
//
// The rules in full: docs/models.md.
package streamcanon
