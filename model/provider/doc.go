// Package provider holds what the hosted model providers (model/openai, model/anthropic)
// share: their configuration, API keys by reference, the retry policy, the request byte
// budget, the trace attribute names of a call, and the schema profiles each API is sent.
//
// Invariants:
//   - A key is named by reference (env:VAR or file:PATH) and read on the worker that calls the
//     model. Its value is never part of a Config's rendering, an error or a log line.
//   - A call is retried only where retrying can help: 429 (after Retry-After when the server
//     sends one), 5xx, a broken connection and an attempt's timeout. Never another 4xx, never
//     a malformed or refused answer. Attempts are bounded and spaced by jittered exponential
//     backoff; the SDKs' own retries are off, so these are the only ones.
//   - Every attempt passes its Config's Endpoint (model/limit) before it is sent and reports
//     how it ended, classified once for both APIs (Judge, JudgeSDK): a broken connection, a
//     5xx or a timeout is unavailability, a 429 a rate limit, anything else an answer. A
//     refusal by the endpoint's open circuit breaker ends the call at once, unsent.
//   - A profile is derived from the proposal schema's one JSON Schema projection. What a
//     dialect cannot express is listed in the profile's delta; the runtime's decoder enforces
//     it on every answer, so a profile never widens what is admitted.
//   - A declared tool is sent under its wire name (WireName: the providers' alphabet
//     [A-Za-z0-9_-], at most 64 bytes), deterministically, and an answer's calls are mapped
//     back by the request's own declarations (ToolNames) before anything else sees them: only
//     the provider layer ever holds a wire name. A name that is no declared tool's wire name
//     never maps back to a declared name. Declarations two of whose names share a wire name
//     are refused (model.CodeToolName) before anything is sent.
//   - Models never see or copy the value envelope (format, root type id, schema digest): the
//     profiles describe the value alone and the runtime adds the envelope.
//
// The rules in full: docs/models.md.
package provider
