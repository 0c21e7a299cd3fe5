// Package openai is a model provider for OpenAI's Chat Completions API and every server that
// speaks it (vLLM, llama.cpp server, Ollama, LiteLLM), through the official Go SDK.
//
// Invariants:
//   - The proposal is asked for with strict structured output: response_format json_schema,
//     strict, with the provider.OpenAIStrict profile of the request's schema. The answer is
//     the assistant message's content, exactly as received.
//   - Streaming (the default) delivers every content delta, in order, to the caller; a caller's
//     error cancels the request, which closes the connection before the rest is read.
//   - The SDK's own retries are off: provider.Call's policy is the only one.
//   - A refusal, an answer without content, or a stream that is not the API's ends in a typed
//     model error, never in partial text taken for an answer.
//
// The rules in full: docs/models.md.
package openai
