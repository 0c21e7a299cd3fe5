// Package bindings builds an agent of bindings: a proposal schema whose every case is bound
// to an action (a final reply, a tool call, an approval of a tool call, a memory write), a
// prompt builder, and what every agent has (an agent.Definition without a Handler). The
// agent it builds is an *agent.Agent like any other, run by the same activation mechanism
// as a handler: each step is one position of the activation's journal, in which the model
// answers the prompt builder's messages, the proposal schema admits the answer, and the
// binding of the admitted case acts.
//
// The bindings runtime lives here: the handler that runs the steps, the gated call of an
// approved step, the prompt builder's view of the journal, the journal's AgentResume form,
// and the checks and negotiations of the bindings when an agent is built. Package agent
// knows a bindings agent only as its handler and its kind (agent/internal/bind.Kind: the
// adapter and journal codec of its suspensions, its tools, its rebuilding with another
// model), and a step reaches the running activation only through agent/internal/bind.Run.
//
// Invariants:
//   - Bindings are explicit. Every case of the schema is bound and every binding names a
//     case, by stable id (the root type id, for a record proposal); an action is never
//     inferred from a case's name, so a case named "tool" or "final" is just the case its
//     binding says.
//   - Model output is data until the schema admits it; only then does its case's action run.
//   - A prompt builder is deterministic: its messages are part of the replay-cache key.
//   - Stored state keeps its form: a suspended activation keeps its steps as an AgentResume
//     (adapter beamagents.agent.v1), one step record per position, read by every later build
//     and written back byte for byte; a record whose step index is not its position, or of
//     another kind than the step expects, is state_corrupt.
//   - A journaled step is passed by its record: no prompt is built, no model asked and no
//     proposal admitted again, except to render the gated call of an approved step, once.
//     A new step reads the key's memory and replay cache only then, and asks the model
//     through the replay cache, so replay makes no model call.
//   - Bounded: an activation takes at most MaxSteps positions (steps and gated calls); one
//     that reaches it fails as budget_exceeded. The handler bounds (MaxOperations,
//     MaxJournalBytes) do not apply to a bindings journal, as they never did.
//   - Errors are values: New's match agent.ErrDefinition; an activation fails with an
//     *agent.Error whose Reason is one of records.Reasons, and commits nothing.
//
// docs/agents.md describes both kinds of agent and when to choose which.
package bindings
