// Package hosted chooses a model provider by name when a pipeline is launched: "scripted"
// (the agent's own model), "openai" or "anthropic". Options are plain values that travel
// inside the pipeline: the API key is only a reference, read on the worker by New. Every
// hosted model New returns sits behind its endpoint's per-process limiter and circuit breaker
// (model/limit); its fallbacks, each behind its own, answer in order when it is unavailable.
//
// The rules in full: docs/models.md.
package hosted
