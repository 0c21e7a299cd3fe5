// Package anthropic is a model provider for Anthropic's Messages API, through the official Go
// SDK.
//
// Invariants:
//   - The proposal is asked for as the input of one tool that tool_choice forces, whose
//     input_schema is the provider.AnthropicTool profile of the request's schema. The answer
//     is that tool call's input JSON, exactly as received (streamed: the concatenated
//     input_json_delta fragments).
//   - Streaming (the default) delivers every input_json_delta, in order, to the caller; a
//     caller's error cancels the request, which closes the connection before the rest is read.
//   - The SDK's own retries are off: provider.Call's policy is the only one.
//   - A refusal, an answer without the tool call, or a stream that is not the API's ends in a
//     typed model error, never in partial text taken for an answer.
//
// The rules in full: docs/models.md.
package anthropic
