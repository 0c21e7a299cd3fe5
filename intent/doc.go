// Package intent gives ToolIntents their deterministic identity and their signature.
//
// Identity. An intent id is a UUIDv5 (RFC 9562, SHA-1 name-based) in [Namespace] over the
// UTF-8 name
//
//	<lowercase hex of entity_key>|<seq>|<step_index>
//
// (decimal integers), in canonical string form, so the same activation step always yields the
// same id, in this runtime and in every other runtime of the wire: a retried bundle, or a
// second runtime that sees the same envelope, re-emits an intent the effector has already
// seen, and the effector deduplicates by id. Hex digits and decimal integers never contain '|',
// so the name is unambiguous for keys of any bytes. docs/identity.md is the cross-runtime
// identity contract.
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
// Answers. A ToolResult or an Approval that answers an intent carries the same signature
// envelope and the intent's content digest ([Digest]: SHA-256 of its signing input with
// attempt and expires_at_ms cleared, so every attempt of one call has one digest), which the
// signature covers ([SignResult], [SignApproval]). [VerifyResult] and [VerifyApproval] check
// an answer against the pending intent it claims to answer: the five outcomes above, and
// [BindingMismatch] for a verified answer bound to another intent with the same id.
//
// Keys. A [Keyring] holds named HMAC keys and names the active one. It is loaded by reference
// ("env:VAR" or "file:PATH", see [LoadKeyring]) on the worker that uses it, so key material is
// never part of a pipeline graph, and no String, GoString or fmt verb of a Keyring ever prints
// key bytes.
//
// docs/wire-and-state.md describes signing, the verify modes and what `beamagents run` does
// without a keyring.
package intent
