// Package genkit runs agents written with Firebase Genkit for Go as handler agents of the
// beamagents runtime (docs/adapters.md).
//
// New builds, once per agent definition, a Genkit instance holding a model and tools that
// the runtime answers through the handler's agent.Context, which each run carries in its Go
// context (Agent.Handler binds it):
//
//   - The model (ModelName) is answered by Context.Chat: every call goes through the replay
//     cache, the budgets and the concurrency limits, and the answer's tool calls are admitted
//     strictly by their tools' closed schemas before Genkit sees them (a tool request's input
//     is the admitted canonical arguments: integers as decimal strings, never a float).
//   - Each Tool is a Genkit tool: an inline read-only one runs through Context.Inline, a
//     side-effecting one becomes a signed intent through Context.Tools, a gated one goes
//     through Context.Approved. A suspension is Genkit's own tool interrupt: Agent.Generate
//     returns agent.ErrSuspended with the interrupted response.
//
// Durability is the runtime's journal: when a suspended activation resumes, the handler runs
// the Genkit program again from the top; each model call and tool call already completed
// returns its journaled result, so Genkit's loop reaches the same point with the same
// messages and continues past it (Genkit's resume-with-responses is not needed).
//
// Genkit runs a turn's tools concurrently and collects their responses in completion order;
// a Context is not safe for concurrent use and its journal positions must not depend on
// scheduling. So the first tool of a turn that Genkit starts runs the whole turn's calls, in
// the model's call order, exactly as a native handler's RunTools does (inline calls first,
// then every side-effecting call as one suspension; call by call when a gate asks for an
// approval), and the next request's tool messages are rendered in call order from those
// results, whatever order Genkit delivered them in. A tool call without an id gets a
// deterministic one (Genkit would draw a random UUID), so Genkit's ids and timestamps never
// reach a request or an output.
package genkit
