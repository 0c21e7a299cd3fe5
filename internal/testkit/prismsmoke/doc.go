// Package prismsmoke proves, inside `go test` from a clean clone, that the Beam Go toolchain
// works here: a stateful DoFn keyed by entity_key, fed AgentEnvelope protobuf elements, keeping
// []byte keyed state and one event-time timer family, runs to completion on the embedded Prism
// runner and produces exactly the expected per-key outputs.
package prismsmoke
