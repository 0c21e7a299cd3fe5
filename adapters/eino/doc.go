// Package eino runs agents written with CloudWeGo Eino as handler agents of the beamagents
// runtime (docs/adapters.md).
//
// The adapter has three parts, each a thin binding of an Eino interface to an operation of
// the handler's agent.Context, which the run's Go context carries (agent.FromContext):
//
//   - Model is Eino's model.ToolCallingChatModel answered by Context.Chat: every call goes
//     through the replay cache, the budgets and the concurrency limits, and the answer's tool
//     calls are admitted strictly by their tools' closed schemas before Eino sees them (Eino's
//     tool call carries the admitted canonical arguments, integers exact).
//   - NewTool makes an Eino tool of a runtime tool declaration, answered by
//     Context.RunCalls as a native handler's calls are: inline, a signed intent (the
//     activation suspends), or behind an approval first when the declaration's
//     NeedsApproval asks for one.
//   - Handler runs an Eino program (a compiled graph, a ReAct agent) as the body of an
//     agent.Handler and maps its outcome (agent.Outcome, and Eino's step limit as
//     budget_exceeded).
//
// Durability is the runtime's journal: when a suspended activation resumes, the handler runs
// the Eino program again from the top; each model call and tool call already completed
// returns its journaled result, so Eino's run reaches the same point with the same messages
// and continues past it. Eino's own checkpoints and interrupts are not used: the message
// history is a function of the journaled results, which live in the key's versioned
// continuation state, and Eino's ids and timestamps never reach an output.
//
// Invariants: the program must be deterministic given the results of its model and tool
// calls (the handler rules of docs/agents.md); Eino must run tools one at a time
// (ToolsConfig returns a configuration that does), because a Context is not safe for
// concurrent use.
package eino
