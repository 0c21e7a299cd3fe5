// Package tool is the effector's registry of tool implementations: Go functions with typed
// arguments, HTTP endpoints and (in package mcptool) tools served by MCP servers.
//
// Invariants:
//   - Every tool declares its argument schema, the root record of a compiled
//     interaction.Schema. An intent's arguments are decoded and negotiated against it before
//     the tool runs; a tool never sees arguments its schema refuses.
//   - A tool sees its arguments in its own shape (Present): property names, not stable ids,
//     and JSON numbers only for integer fields whose whole range is exactly representable as
//     an IEEE-754 double (|n| ≤ 2^53−1); any other integer field is a decimal string, and a
//     typed Go tool must declare it as one (`json:",string"`) or registration fails.
//   - Every declared schema is compiled from a protobuf descriptor: a .proto's, or one built
//     from a JSON Schema (FromJSONSchema) or a Go struct (Struct) by one descriptor builder.
//     A struct's schema is presented to models by property names; Declare ties it to typed
//     calls (Decode, Encode) and to the tool's implementation.
//   - A call carries its intent id; HTTP tools send it as the Idempotency-Key header, so a
//     tool idempotent on it closes the window between its effect and the effector's
//     completion record (docs/effector.md).
//   - Agents registered in a binary bring their tools through RegisterAgentTools, keyed by
//     agent name.
package tool
