// Package mcptool executes tools served by Model Context Protocol servers (through the
// official Go SDK), over a stdio command or streamable HTTP.
//
// Invariants:
//   - A tool's argument schema is the server's own inputSchema, read when connecting and
//     derived with tool.FromJSONSchema: intents are negotiated against what the server
//     declares, and a server schema the runtime cannot represent exactly is refused then.
//   - Each call carries the intent id in its _meta ("beamagents/intent_id") so a server can
//     be idempotent on it.
//   - A result with isError is the tool's failure; otherwise the payload is the structured
//     content (JSON) when present, else the text content.
package mcptool
