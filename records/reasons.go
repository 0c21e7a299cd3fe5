package records

// Reason is a dead-letter reason: ActivationErrorRecord.reason. The vocabulary is closed: every
// dead letter the runtime emits carries one of the constants below, and consumers may switch
// on them. A new reason is an API addition; an existing one is never renamed.
type Reason string

// The dead-letter reasons.
const (
	// ReasonEnvelopeInvalid: the input bytes do not decode as an AgentEnvelope, or the envelope
	// has no entity key or no payload.
	ReasonEnvelopeInvalid Reason = "envelope_invalid"
	// ReasonStateVersionUnsupported: a state cell was written by a newer state_schema_version
	// than this binary knows. The state is left untouched for the newer binary.
	ReasonStateVersionUnsupported Reason = "state_version_unsupported"
	// ReasonStateCorrupt: a state cell does not decode.
	ReasonStateCorrupt Reason = "state_corrupt"
	// ReasonProposalRefused: the model's output was refused by the proposal decoder.
	ReasonProposalRefused Reason = "proposal_refused"
	// ReasonOrphanedResult: a tool result matches no pending intent.
	ReasonOrphanedResult Reason = "orphaned_result"
	// ReasonApprovalUnknown: an approval matches no pending APPROVAL intent.
	ReasonApprovalUnknown Reason = "approval_unknown"
	// ReasonApprovalTimeout: an approval was not decided before its deadline and escalations.
	ReasonApprovalTimeout Reason = "approval_timeout"
	// ReasonActivationTimeout: a tool result did not arrive before its deadline and escalations.
	ReasonActivationTimeout Reason = "activation_timeout"
	// ReasonBudgetExceeded: an activation hit its step or model-call budget.
	ReasonBudgetExceeded Reason = "budget_exceeded"
	// ReasonInboxFull: an external event arrived while suspended and the inbox was full.
	ReasonInboxFull Reason = "inbox_full"
	// ReasonFinalTooLarge: the rendered final action exceeds the agent's bound.
	ReasonFinalTooLarge Reason = "final_too_large"
	// ReasonSigningFailed: an intent could not be signed.
	ReasonSigningFailed Reason = "signing_failed"
	// ReasonModelError: the model call failed.
	ReasonModelError Reason = "model_error"
	// ReasonInternalPanic: user code (a prompt builder, a model) panicked.
	ReasonInternalPanic Reason = "internal_panic"
	// ReasonRestoreRefused: a state restore targeted a key that already has state, or carried
	// an unusable snapshot.
	ReasonRestoreRefused Reason = "restore_refused"
	// ReasonRequestTooLarge: a step's model request (prompt, memory and history) exceeds the
	// agent's request byte budget; no model call was made.
	ReasonRequestTooLarge Reason = "request_too_large"
	// ReasonResultRefused: a tool result for a pending intent was refused by signature
	// verification (Deps.VerifyResults): unsigned under require, a bad signature, an unknown
	// key, an unsupported scheme, or signed for another intent than the pending one. The
	// activation does not resume; the key keeps waiting for its deadline.
	ReasonResultRefused Reason = "result_refused"
	// ReasonApprovalRefused: a decision on a pending APPROVAL intent was refused by signature
	// verification, as ReasonResultRefused. The gated tool is not released.
	ReasonApprovalRefused Reason = "approval_refused"
	// ReasonNondeterministicAgent: a handler agent, run again from the top to resume its
	// activation, did something else than its journal recorded (another operation, another
	// subject or other arguments at the same position, or fewer operations). Nothing of the
	// resumed run is committed; the key keeps waiting as it was.
	ReasonNondeterministicAgent Reason = "nondeterministic_agent"
	// ReasonJournalTooLarge: a handler activation's journal, kept in its continuation while it
	// waits, exceeds the agent's journal byte budget; the activation does not suspend.
	ReasonJournalTooLarge Reason = "journal_too_large"
	// ReasonSignalUnawaited: a signal that no activation of its key awaits: the key is idle,
	// the signal came at or after the deadline of the wait for it, or it was still queued when
	// the activation it waited behind ended. The record carries the signal, to be redriven.
	ReasonSignalUnawaited Reason = "signal_unawaited"
	// ReasonSignalRefused: a signal refused by signature verification (Deps.VerifyResults), as
	// ReasonApprovalRefused. It resumes nothing and is not queued.
	ReasonSignalRefused Reason = "signal_refused"
	// ReasonMemoryStoreFailed: a handler's long-term memory operation (Context.Recall,
	// Remember) found no store in the run's dependencies, or the store failed or refused the
	// operation's entry (package ltm's errors).
	ReasonMemoryStoreFailed Reason = "memory_store_failed"
	// ReasonShardRefused: an activation of a sharded agent (Definition.Shards above 1) used
	// what one sub-key cannot hold for its whole entity: working memory, long-term memory or
	// a signal wait (a signal addresses the entity, never one of its sub-keys).
	ReasonShardRefused Reason = "shard_refused"

	// ReasonTenantBudgetSpent: an external event came after its tenant's token budget for the
	// event-time window was spent, and the agent's degrade rule for it is to fail
	// (budget.DegradeFail). Nothing ran; the event is in the record, to be redriven.
	ReasonTenantBudgetSpent Reason = "tenant_budget_spent"
)

// Reasons lists the closed vocabulary.
var Reasons = []Reason{
	ReasonEnvelopeInvalid, ReasonStateVersionUnsupported, ReasonStateCorrupt, ReasonProposalRefused,
	ReasonOrphanedResult, ReasonApprovalUnknown, ReasonApprovalTimeout, ReasonActivationTimeout,
	ReasonBudgetExceeded, ReasonInboxFull, ReasonFinalTooLarge, ReasonSigningFailed,
	ReasonModelError, ReasonInternalPanic, ReasonRestoreRefused, ReasonRequestTooLarge,
	ReasonResultRefused, ReasonApprovalRefused, ReasonNondeterministicAgent, ReasonJournalTooLarge,
	ReasonSignalUnawaited, ReasonSignalRefused, ReasonMemoryStoreFailed, ReasonShardRefused,
	ReasonTenantBudgetSpent,
}
