// Package latency holds the model-latency benchmark of the devices agent: a handler agent
// (examples/devices) through RunAgent and RunAgentBatch on Prism against a loopback
// OpenAI-compatible server that answers each request after a fixed delay. It has no API.
package latency
