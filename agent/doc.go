// Package agent is the activation core: one deterministic step of an agent for one entity
// key, (committed state, input) → (state changes, outputs). It is not pure: a step calls
// the agent's model, which may be a hosted API reached over the network under deadlines,
// and runs the agent's inline tools; but nothing it decides reads a clock, and a model's
// answer reaches the outputs only through the replay cache and the admission of its text,
// so the same input on the same state gives the same bytes. It imports no Beam.
//
// Inputs are AgentEnvelopes (external event, tool result, approval, export request) and
// firings of the key's one timer family (tags host.TagDeadline and host.TagTTL). Outputs are
// signed ToolIntents, TraceEvents with OpenTelemetry GenAI attributes, FinalReplies,
// StateSnapshots and dead letters (ActivationErrorRecords whose reason is one of
// records.Reasons).
//
// # For authors
//
// An agent is a Definition: what every agent has (a name, a model, limits, declared tools
// as ToolDecls, a state schema) and its Handler, Go code over a Context and the activation's
// Trigger (of one external event, or of a burst of them: Definition.Burst, Trigger.Events).
// The Context's operations (Propose with an Ask, Chat with native tools and its
// Turn of ToolCalls, RunTools, Tool and Tools, Approved, Inline with an InlineFunc, the
// memory's Get, Put, Delete, Append and Ring, the long-term memory's Recall and Remember,
// Reply, ReplyValue and Fail) are journaled; ErrSuspended and ErrReplied are what they return when the activation waits or has
// replied. A ToolDecl's NeedsApproval gates a side-effecting tool's calls behind an approval
// inside RunTools and RunCalls (a rejection answered with its Denied message). For framework
// adapters: FromContext finds the run's Context in the Go context it hands out, AdmitCall
// admits arguments a framework hands a tool, ToolMessage spells a tool
// message, and Outcome maps the error a framework hands back. New builds
// the agent; Register makes it available to a command line by name.
// An agent of bindings (a proposal schema whose cases are bound to actions) is built by
// package agent/bindings and runs on the same mechanism. docs/agents.md states the API.
//
// # For hosts
//
// The code that runs agents (package agent/drive, the Beam DoFns of package transforms,
// offline replay, the test harness) calls the core through package agent/host, which an
// author never needs: Activate, Fire, Restore and a Batch over the key's cells in a Store,
// the Result with its Outputs and TimerOps, the Deps of a run, DeadLetter, the timer tags and
// the state cells. From this package a host uses what every agent describes of itself (Name,
// Schema, Limits, HasModel, EmitsIntents, PinsModel, FlushesOnExpiry, Shards, ToolShapes), the model swap WithModel
// (a launcher's choice of model) and the registry's Build and Registered. The activation is
// implemented here, since it needs the Context's internals, and lent to package host when
// this package is initialized. A host opens a Batch over the key's cells, hands it the inputs
// of one firing, emits their outputs, writes what the batch changed once and sets its timers.
//
// Canary. host.WithCanary makes an agent that routes a stable slice of the keys (package canary)
// to a candidate agent sharing its state schema: an activation that starts runs on the agent
// the slice names, one that resumes on the agent that started it, which its suspension
// records (Continuation.agent; empty without a canary, so state without one is unchanged).
// A host runs the routing agent as any other.
//
// Tracing. An activation is one trace. Each attempt on it (the external event that starts
// it, each tool result or approval that resumes it, each deadline firing) is one span,
// opened by ACTIVATION_START and closed by ACTIVATION_END; the attempt's other events are its
// children, and later attempts are children of the first. Ids, roles, parentage and
// attribute names follow docs/identity.md, shared with the Python runtime; package tracing
// holds the derivations and names.
//
// # Invariants
//
//   - Atomic activations. A failed activation commits nothing: no cell write, no output but
//     one dead letter whose reason is the *Error's Reason, and the ERROR trace events of its
//     model calls that a circuit breaker refused (docs/identity.md). Two dead letters come with
//     committed changes by design: a queued inbox event whose own activation fails (it leaves
//     the inbox, so it cannot block the key), a deadline that fails closed after its
//     escalations (the suspension is cleared; approval_timeout or activation_timeout), and
//     the signals still queued when an activation ends (signal_unawaited; they leave the
//     inbox).
//   - No clocks. Every time is the envelope's event time or the timer's firing time.
//   - Determinism. Intent ids are UUIDv5 over (entity key, seq, step); trace and span ids are
//     UUIDv5 over (entity key, seq) and a span's role and index (docs/identity.md); outputs
//     come in a fixed order; map iteration never reaches an output. The same input on the same
//     state gives the same bytes.
//   - The replay cache is keyed by model.CacheKey over the request material (model id,
//     messages, schema digest, sampling, entity key, seq, step). A hit makes no model call;
//     a digest-only hit calls the model and reports a different answer as provider divergence
//     on the trace. Replaying committed history against restored state (for example a
//     snapshot) therefore makes no model call and reproduces the outputs byte for byte.
//     Beam commits state and outputs of a bundle together, so a bundle retried after a
//     failure before commit calls the model again; nothing of the failed attempt was ever
//     observed.
//   - Answers are checked before they act. With host.Deps.VerifyResults a tool result or an
//     approval resumes a suspension only if it verifies under that mode and is bound to the
//     pending intent of its id (intent.Mode.CheckResult, CheckApproval), and a signal only if
//     it verifies (Mode.CheckSignal); a refused one is a result_refused, approval_refused or
//     signal_refused dead letter and the key keeps waiting.
//   - Model output is data until the proposal schema admits it, and only bindings by stable
//     case id turn an admitted case into an action: a case named "tool" or "final" is still
//     just the case its binding says.
//   - One mechanism, no kind branches. The core never asks which kind an agent is: what
//     differs between kinds (the suspension's adapter and journal codec, whether the memory
//     and the cache are read before the run or when it first asks the model, whether signals
//     may be awaited, the tools the intents call, rebuilding with another model) is a method
//     of the agent's kind (agent/internal/bind.Kind); a bindings step reaches the activation
//     only through agent/internal/bind.Run, never through an export of this package.
//   - Lazy state. An input reads only the cells its path needs, each at most once, and
//     writes only the cells that changed (host.Result.Reads and Writes); a host.Batch reads
//     each cell from its Store at most once whatever the number of inputs, and keeps the decoded
//     memory and replay cache from one input to the next (each input works on a
//     copy-on-write clone, so a failed input leaves them as committed).
//
// Activation semantics: an external event runs a new activation at the key's seq (or waits in
// the bounded inbox while the key is suspended), or with Definition.Burst the events of a
// burst run as one (host.Batch.ActivateBurst; a host gathers them by event time under
// package agent/burst's rule); each step asks the model, admits the proposal and acts on
// its case (final reply, remember and continue, tool intent and suspend, approval intent and
// suspend); a tool result or an approval resumes the suspended
// activation at the next step; when an activation ends, seq advances and queued events run
// in arrival order. A deadline firing re-emits the pending intents with the next attempt up
// to Limits.MaxEscalations times, then fails closed; the deadline of a handler's durable wait
// (Continuation.wake_at_ms: Sleep, Until, ToolsBy, AwaitBy) resumes the activation instead.
// A Signal envelope resumes the activation that awaits its name, waits in the inbox while the
// key waits for something else, and is a signal_unawaited dead letter when nothing awaits it
// (docs/agents.md, Timers and Signals). A TTL firing drops an idle key's memory
// and replay cache; seq is kept forever so intent ids never repeat.
//
// Every agent is a handler. New builds one from Definition.Handler; package agent/bindings
// builds an agent of bindings, whose handler is the bindings runtime (one position per step),
// which lives there, so there is one activation mechanism; its suspensions keep their journal
// as an AgentResume (adapter beamagents.agent.v1), mapped one to one to the handler journal.
//
// Handler agents (Definition.Handler) are Go code over a Context instead of bindings: each of
// their operations (model calls, native-tool chats, tool and approval intents, inline
// read-only tools, memory and rings) takes the next position of the activation and is
// journaled; a suspended handler activation keeps its journal (a HandlerJournal) in the
// continuation, and a resumed one runs the handler again from the top, every journaled
// operation returning its recorded result without effect. A run that strays from its journal
// fails as nondeterministic_agent and commits nothing; a journal over Limits.MaxJournalBytes
// does not suspend (journal_too_large). docs/agents.md states the API and its rules.
//
// The state cells, the wire messages and the dead-letter reasons are described in
// docs/wire-and-state.md; the activation benchmarks' figures are in docs/benchmarks.md.
package agent
