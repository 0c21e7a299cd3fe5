// Package genkit runs agents written with Firebase Genkit for Go as handler agents of the
// beamagents runtime (docs/adapters.md).
//
// New builds, once per agent definition, a Genkit instance holding a model and tools that
// the runtime answers through the handler's agent.Context, which each run's Go context
// carries (agent.FromContext; Agent.Handler keeps the run's state beside it):
//
//   - The model (ModelName) is answered by Context.Chat: every call goes through the replay
//     cache, the budgets and the concurrency limits, and the answer's tool calls are admitted
//     strictly by their tools' closed schemas before Genkit sees them (a tool request's input
//     is the admitted canonical arguments: integers as decimal strings, never a float).
//   - Each tool declaration (agent.ToolDecl) is a Genkit tool answered as a native
//     handler's call is (Context.RunCalls): inline, a signed intent, or behind an approval
//     first when its NeedsApproval asks. A suspension is Genkit's own tool interrupt:
//     Agent.Generate returns agent.ErrSuspended with the interrupted response.
//
// Durability is the runtime's journal: when a suspended activation resumes, the handler runs
// the Genkit program again from the top; each model call and tool call already completed
// returns its journaled result, so Genkit's loop reaches the same point with the same
// messages and continues past it (Genkit's resume-with-responses is not needed).
//
// Genkit runs a turn's tools concurrently and collects their responses in completion order;
// a Context is not safe for concurrent use and its journal positions must not depend on
// scheduling. So the first tool of a turn that Genkit starts runs the whole turn's calls, in
// the model's call order, with the native handler's RunCalls (so the same positions as its
// RunTools), and the next request's tool messages are those RunCalls returned, in call
// order, whatever order Genkit delivered the responses in. A tool call without an id gets a
// deterministic one (Genkit would draw a random UUID), so Genkit's ids and timestamps never
// reach a request or an output.
package genkit
