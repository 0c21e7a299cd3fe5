// Package support is a complete example agent: a customer-support agent whose model may
// reply, look an order up (a tool call), refund an order (gated by a human approval) or
// remember a fact about the customer. It registers itself as "support" for pipelines and the
// command line, and ships a recorded model script and an envelopes file that exercise every
// path of the runtime; `beamagents demo` runs them on Prism.
//
// The model is a replay source (model.Scripted) over model_script.jsonl: recorded answers
// keyed by (entity, seq, step). To run against a live model, build a Definition with a real
// model.Model and the same schema, bindings and prompt.
package support
