// Package conformance is the conformance kit of agent framework adapters: the same scenarios,
// run on Prism against a loopback OpenAI-compatible server answering with native tool calls,
// for every implementation of one agent contract (the native handler API and each framework
// adapter), so that docs/adapters.md's matrix compares like with like.
//
// # The conformance agent
//
// A subject is a registered agent (agent.Register) that behaves as examples/devices does,
// configured by the JSON Config the kit passes to its factory:
//
//   - An external event is a reading (devices.ParseReading; an undecodable one fails as
//     envelope_invalid). Every reading is appended to the memory ring devices.RingKey (keep
//     devices.RingSize); a quiet one (Reading.Quiet) ends the activation without a model call.
//   - An anomaly asks the model (every call through agent.Context.Chat, so through the replay
//     cache, the budgets and the strict admission of tool-call arguments) with the system
//     prompt devices.SystemPrompt, the user message devices.Anomaly(reading, ring) and the two
//     native tools devices.lookup (inline read-only: devices.Lookup) and devices.dispatch
//     (side-effecting: a signed TOOL intent), whose argument schemas are
//     devices.LookupArgs and devices.DispatchArgs, with devices.LookupDescription and
//     devices.DispatchDescription.
//   - Each tool call is answered with a tool message: the lookup's output (or "error: "
//     and its failure), the dispatch result's payload (or its status and error message).
//     An answer without tool calls is the final reply (agent.Context.Reply of its text).
//     After devices.MaxTurns model turns without an answer it fails as budget_exceeded.
//   - Config.ApproveOverMilliC > 0 gates a dispatch behind a human approval
//     (agent.ToolDecl.NeedsApproval: an APPROVAL intent first) when the reading is at or
//     above it (devices.VariantConfig.ToolDecls); a denied dispatch is
//     answered with the tool message Denied.
//   - Config.MaxTokens is the activation's token budget (agent.Limits.MaxTokens), and
//     Config.ModelID the model id its requests name (Definition.ModelID).
//
// NativeAgent ("devices-native") is the kit's own implementation on the handler API; with an
// empty Config it is examples/devices.
//
// # Plugging an adapter in
//
// An adapter module implements the contract with its framework, registers it (its example's
// agent, devices-<framework>, usually is the subject: with an empty Config it must be the
// devices example), and runs the kit from a test in its own module:
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Subject{Framework: "langchaingo", Agent: "devices-langchaingo"})
//	}
//
// (the test must be named TestConformance: scripts/conformance.sh runs every module's
// TestConformance with go test -json and builds the matrix from the subtests' results, named
// TestConformance/<framework>/<scenario>; each scenario has one subtest per model API, so a
// cell passes when it passes against both). The traffic runs once per model API (APIs:
// OpenAI's and Anthropic's), each against its llmtest stand-in, strict as the vendor's API:
// a request the vendor would refuse fails the scenario. A scenario the framework cannot
// support is listed in Subject.Lacks with the reason: it is reported as skipped, and the
// matrix shows n/a. CheckBinary runs the end-to-end check of a built binary against each API
// (run against the loopback server, signed dispatch intent with the exact device id, resume,
// replay without a model call), and Bench measures a subject's activation cost against NativeAgent in the same run.
//
// The kit is a test kit: only tests import it.
package conformance
