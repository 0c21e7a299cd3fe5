// Package host is what a host that runs agents calls: the code around package agent's
// activation core that reads a key's state, hands the core one input at a time, emits its
// outputs, commits its writes and sets its timers. The hosts in this module are the Beam
// DoFns of package transforms, the driver of package agent/drive (the fast path and the
// local runs), offline replay, the conformance kit and package agent/agenttest's harness; an
// agent's author never needs this package, which is why it is not part of package agent.
//
// A call of the core runs against one key's committed cells in a Store (MapStore in memory)
// with the Deps of the worker (the keyring signing intents, the verification of answers, the
// long-term memory store, a recorded run's inline tools for a replay) and returns a Result:
// the Outputs in emission order, the cells that changed and the TimerOps of the key's one
// event-time timer family, whose tags are TagDeadline and TagTTL. Activate runs one envelope,
// Fire one firing of the timer, Restore one snapshot into an empty key; a Batch (NewBatch)
// runs several inputs of a key against the same committed state, reading each cell at most
// once and keeping the decoded memory and replay cache between inputs, so that a host commits
// once. WithCanary routes a stable slice of the keys (package canary) to a candidate agent,
// each activation ending on the agent that started it. DeadLetter builds the record of a failure the host meets outside the core, with the
// core's reasons. The state cells are listed by Cells, with their fields in the combined
// encoding AgentStateCells (CellField); their encodings are package statecodec's, except the
// inbox's (CellInbox).
//
// The activation itself stays in package agent, which needs the internals of the Context it
// hands a handler: this package's functions reach it through a hook package agent sets when it
// is initialized, and its types are aliases of those package agent's core is written in, so
// a call through this package costs what a direct call did. package agent documents the
// activation's invariants (atomic activations, no clocks, determinism, lazy state).
package host
