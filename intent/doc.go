// Package intent gives ToolIntents their deterministic identity and their signature.
//
// Identity. An intent id is a UUIDv5 (RFC 9562, SHA-1 name-based) in [Namespace] over the name
//
//	u32be(len(entity_key)) || entity_key || i64be(seq) || u32be(step_index)
//
// so the same activation step always yields the same id: a retried bundle re-emits an intent
// the effector has already seen, and the effector deduplicates by id. The length prefix keeps
// the layout unambiguous for keys of any bytes.
//
// Signing. A signature is HMAC-SHA256 over the deterministic protobuf serialization of the
// intent with its three signature fields (signature_scheme, signing_key_id, signature)
// cleared. Unknown fields are kept and serialized after the known ones; since every future
// ToolIntent field takes a number above the signature fields, a verifier on older bindings
// reproduces a newer signer's input exactly.
//
// Verification yields one of five distinct outcomes ([OK], [Unsigned], [BadSignature],
// [UnknownKey], [UnsupportedScheme]); a [Mode] (off, permissive, require) decides which of them
// a consumer admits. Each refused outcome has its own dead-letter reason ([Outcome.Reason]).
//
// Keys. A [Keyring] holds named HMAC keys and names the active one. It is loaded by reference
// ("env:VAR" or "file:PATH", see [LoadKeyring]) on the worker that uses it, so key material is
// never part of a pipeline graph, and no String, GoString or fmt verb of a Keyring ever prints
// key bytes.
//
// docs/wire-and-state.md describes signing, the verify modes and what `beamagents run` does
// without a keyring.
package intent
