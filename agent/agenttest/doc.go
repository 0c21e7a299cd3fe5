// Package agenttest runs an agent in a plain `go test`: no Beam, no runner, no files. A
// Harness holds the state of every key in memory and drives the agent's core (host.Activate
// and host.Fire, what the Beam step runs) one input at a time, as a person would: send an
// event, read the intents it emitted, answer a tool, approve or reject, let event time pass a
// deadline, then look at the replies, the journal and the memory.
//
// A model for a test is a Go function (ModelFunc) or a script of answers keyed by what was
// asked (model.ParseScript with "last" or "contains" rules), so a test does not break when a
// handler asks in another order. Harness.Model swaps it in for the agent's own.
//
// # Invariants
//
//   - Event time is the harness's clock: it moves only by Advance, never by the wall clock, so
//     a test's outputs are the same on every run.
//   - Every input is one atomic call of the core against what the inputs before it committed;
//     a failed input commits nothing and yields one dead letter, exactly as in a pipeline.
//   - Intents are signed with the harness's keyring and answers are signed for the intent they
//     answer; the core verifies them under intent.ModeRequire, as `run --keyring` does, so a
//     test cannot pass with an answer production would refuse.
//   - Timers fire in event time as in a pipeline (docs/drive.md): Advance fires every timer due
//     by the new time, earliest first, a suspension's deadline before the idle TTL at the same
//     time, keys in byte order.
//
// See docs/agents.md, "Testing an agent".
package agenttest
