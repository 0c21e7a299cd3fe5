package tracing

// Attribute names from the OpenTelemetry semantic conventions (GenAI and general), used where
// they define the concept.
const (
	AttrOperationName         = "gen_ai.operation.name"          // see the Op* values
	AttrAgentName             = "gen_ai.agent.name"              // ACTIVATION_START
	AttrRequestModel          = "gen_ai.request.model"           // LLM_CALL: the model id asked
	AttrResponseFinishReasons = "gen_ai.response.finish_reasons" // LLM_CALL: why the provider stopped, when it says
	AttrResponseModel         = "gen_ai.response.model"          // LLM_CALL: the model that answered, when the provider says
	AttrInputTokens           = "gen_ai.usage.input_tokens"
	AttrOutputTokens          = "gen_ai.usage.output_tokens"
	AttrCacheReadInputTokens  = "gen_ai.usage.cache_read.input_tokens" // LLM_CALL: of the input tokens, those read from the provider's prompt cache; only when some were
	AttrGenAIToolName         = "gen_ai.tool.name"                     // TOOL_CALL of an execute_tool operation
	AttrErrorType             = "error.type"
)

// Values of gen_ai.operation.name.
const (
	OpInvokeAgent = "invoke_agent" // ACTIVATION_START
	OpChat        = "chat"         // LLM_CALL: every model call
	OpExecuteTool = "execute_tool" // TOOL_CALL: a tool result came back
	OpApproval    = "approval"     // TOOL_CALL: a human decided an approval intent
)

// Prefix starts the name of every attribute that is the runtime's own.
const Prefix = "beam_agents."

// The runtime's own attribute names.
const (
	AttrAgent            = "beam_agents.agent"             // every event: the registered agent's name
	AttrActivationKind   = "beam_agents.activation.kind"   // ACTIVATION_START: see the Kind* values
	AttrActivationStatus = "beam_agents.activation.status" // ACTIVATION_END: see the Status* values
	AttrCacheHit         = "beam_agents.cache_hit"         // LLM_CALL: "true" when the replay cache answered
	AttrCache            = "beam_agents.cache"             // LLM_CALL: hit, miss or digest_only_hit
	AttrBilled           = "beam_agents.billed"            // LLM_CALL: "true" when a provider was called
	AttrDivergence       = "beam_agents.provider_divergence"
	AttrCase             = "beam_agents.case"          // LLM_CALL: the admitted proposal case
	AttrAnsweredBy       = "beam_agents.answered_by"   // LLM_CALL: the fallback model that answered, when not the first
	AttrModelsPassed     = "beam_agents.models_passed" // LLM_CALL: models passed over first, "model=code,…" (model_circuit_open: refused by its breaker)
	AttrTokens           = "beam_agents.tokens"        // LLM_CALL: tokens the activation has been charged so far, when it has a token budget
	AttrAttempts         = "beam_agents.attempts"
	AttrTenant           = "beam_agents.tenant"        // LLM_CALL: the entity key's tenant, when the agent declares tenants
	AttrAgentVersion     = "beam_agents.agent.version" // LLM_CALL: the agent's version, when it declares one
	AttrReason           = "beam_agents.reason"        // ERROR: the dead letter's reason
	AttrIntentID         = "beam_agents.intent_id"
	AttrIntentKind       = "beam_agents.intent_kind" // TOOL or APPROVAL
	AttrToolName         = "beam_agents.tool_name"
	AttrToolStatus       = "beam_agents.tool_status" // TOOL_CALL: the result's status name, for example OK
	AttrApproved         = "beam_agents.approved"    // TOOL_CALL of an approval: "true" or "false"
	AttrExpiresAt        = "beam_agents.expires_at_ms"
	AttrDeadline         = "beam_agents.deadline_ms"
	AttrPendingIntents   = "beam_agents.pending_intents"
	AttrEscalations      = "beam_agents.escalations"
	AttrInline           = "beam_agents.inline"      // TOOL_CALL: "true" for an inline read-only tool run in the worker
	AttrToolCalls        = "beam_agents.tool_calls"  // LLM_CALL with native tools: the answer's tool calls
	AttrWakeAt           = "beam_agents.wake_at_ms"  // SUSPENDED on a durable wait: when it ends
	AttrSignalName       = "beam_agents.signal.name" // SUSPENDED awaiting a signal: its name
	// ACTIVATION_START of an activation admitted against a tenant budget (docs/budgets.md):
	// its window's start, the tokens granted (0 over budget), the degrade rule applied when
	// over budget, the event time a parked event came with, and a cost budget's CostMicros
	// (only under a cost budget).
	AttrBudgetWindow     = "beam_agents.budget.window_ms"
	AttrBudgetGranted    = "beam_agents.budget.granted"
	AttrBudgetDegrade    = "beam_agents.budget.degrade"
	AttrBudgetParkedFrom = "beam_agents.budget.parked_from_ms"
	AttrBudgetCost       = "beam_agents.budget.cost_micros"
)

// Values of beam_agents.activation.kind: what drove an attempt.
const (
	KindExternalEvent = "external_event" // a new activation (directly or from the inbox)
	KindToolResult    = "tool_result"
	KindApproval      = "approval"
	KindTimer         = "timer" // the deadline timer: an escalation, the timeout, or a durable wait's wake
	KindSignal        = "signal"
)

// Values of beam_agents.activation.status: how an attempt ended.
const (
	StatusOK        = "ok"        // the activation ended with a final reply
	StatusSuspended = "suspended" // the activation waits for its pending intents
	StatusTimeout   = "timeout"   // the activation failed closed at its deadline
)

// The conformance receipt's attribute names (negotiate.Receipt.Attributes). A receipt always
// carries every one of them.
const (
	AttrConformanceProducerDigest  = "beam_agents.conformance.producer_digest"
	AttrConformanceProducerCase    = "beam_agents.conformance.producer_case"
	AttrConformanceReceiverDigest  = "beam_agents.conformance.receiver_digest"
	AttrConformanceProtocol        = "beam_agents.conformance.protocol"
	AttrConformanceVerdict         = "beam_agents.conformance.verdict"
	AttrConformanceManifestDigest  = "beam_agents.conformance.manifest_digest"
	AttrConformanceDeltaDigest     = "beam_agents.conformance.delta_digest"
	AttrConformanceConforming      = "beam_agents.conformance.conforming"
	AttrConformanceTransformations = "beam_agents.conformance.transformations"
	AttrConformanceWarnings        = "beam_agents.conformance.warnings"
	AttrConformanceInputSHA256     = "beam_agents.conformance.input_sha256"
	AttrConformanceOutputSHA256    = "beam_agents.conformance.output_sha256"
	AttrConformanceReason          = "beam_agents.conformance.reason"
	AttrConformanceReceiptDigest   = "beam_agents.conformance.receipt_digest"
)
