// Package golden guards the wire contract with frozen serialized blobs.
//
// Invariants:
//   - Every blob lives in a v<N>/ directory, where N is the state_schema_version regime its
//     builders were frozen at; nothing sits outside a version directory.
//   - A version directory is written once, by `go run ./golden/cmd/goldengen`, which writes only
//     the current version's directory and refuses to touch one that already holds blobs. A
//     blob is never regenerated, edited or deleted afterwards.
//   - The expected value of every blob is defined by a frozen Go builder beside it (package
//     goldenv1 for v1). The compatibility test decodes each blob with the current bindings,
//     migrates historical versions to the current one, and compares by meaning (proto.Equal),
//     never by re-encoding.
//   - For each field added within a version, the original blob keeps the bytes from before the
//     field existed, and an extra blob carries the field.
//
// The evolution rules the corpus guards are in docs/wire-and-state.md.
package golden
