// Package langchaingo runs langchaingo (github.com/tmc/langchaingo) agents on the beamagents
// runtime, inside a handler (agent.Handler): New gives a langchaingo llms.Model and
// tools.Tools answered by the handler run whose agent.Context their Go context carries
// (agent.FromContext; a handler passes agent.Context.Context), so a langchaingo agent loop
// (for example agents.Executor over agents.OpenAIFunctionsAgent) runs unchanged with the
// runtime's guarantees.
//
// Invariants:
//   - Every model call is Context.Chat: through the replay cache, the model-call and token
//     budgets, the concurrency limits and the strict admission of tool-call arguments. The
//     tools the model is shown are the bound tools' closed argument schemas, whatever
//     parameters the framework declared (langchaingo's OpenAI-functions agent declares one
//     string __arg1); a call of an undeclared tool, an undeclared member or an out-of-range
//     integer fails the activation as proposal_refused before the framework sees it.
//   - The framework sees a call's arguments as their canonical JSON (integers beyond 2^53 as
//     decimal strings), never through a float; a tool admits what it is given again, so an
//     argument the model did not send cannot reach an intent.
//   - A tool is answered as a native handler's call is (Context.RunCalls): a tool with an
//     inline function is an inline read-only tool, any other is side-effecting: a signed
//     TOOL intent, behind an APPROVAL intent first when its declaration's NeedsApproval
//     asks for one (a denied call is answered with its Denied message). A call that
//     suspends returns agent.ErrSuspended to the framework, which stops its loop; the resumed activation runs
//     the handler, and so the framework's loop, again from the top, and every completed
//     model call and tool call returns its journaled result: the loop continues where it was.
//   - The framework's state is what its loop rebuilds from those results in each run, so it
//     lives in the key's journal (versioned state); no langchaingo memory, callback or clock
//     reaches an output, and no framework-generated id does (tool-call ids are the model's,
//     recorded in the journal).
//   - Per-call options that would change the request (sampling, stop words, JSON mode, tool
//     choice, another model) are refused with ErrUnsupported: the request is the agent
//     definition's. A streaming function is called once, with the whole admitted text.
//
// docs/adapters.md describes the adapters, and what langchaingo could not do.
package langchaingo
