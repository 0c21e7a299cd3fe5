// Package bindings builds an agent of bindings: a proposal schema whose every case is bound
// to an action (a final reply, a tool call, an approval of a tool call, a memory write), a
// prompt builder, and what every agent has (an agent.Definition without a Handler). The
// agent it builds is an *agent.Agent like any other, run by the same activation mechanism
// as a handler: each step is one position of the activation's journal, in which the model
// answers the prompt builder's messages, the proposal schema admits the answer, and the
// binding of the admitted case acts.
//
// Invariants:
//   - Bindings are explicit. Every case of the schema is bound and every binding names a
//     case, by stable id (the root type id, for a record proposal); an action is never
//     inferred from a case's name, so a case named "tool" or "final" is just the case its
//     binding says.
//   - Model output is data until the schema admits it; only then does its case's action run.
//   - A prompt builder is deterministic: its messages are part of the replay-cache key.
//   - Stored state keeps its form: a suspended activation keeps its steps as an AgentResume
//     (adapter beamagents.agent.v1), read by every later build.
//
// docs/agents.md describes both kinds of agent and when to choose which.
package bindings
