// Package scenario generates random but valid traffic for the example support agent, for
// differential tests of the runtime's execution paths (RunAgent on a Beam runner, the
// in-memory driver, the bounded fast path): many keys, each with external events, tool results
// in and out of order, approvals granted, rejected and late, export requests, duplicate
// deliveries, malformed records, long idle gaps and state restores, plus the model script
// that answers the keys' requests. The same seed always gives the same bytes.
package scenario
