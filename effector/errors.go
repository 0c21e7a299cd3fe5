package effector

import "github.com/beamagents/beamagents/internal/errs"

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	CodeConfig  Code = "effector_config_invalid"  // options, bindings or references are unusable
	CodeStore   Code = "effector_store_failed"    // the dedup store failed
	CodeInput   Code = "effector_input_invalid"   // an input file or message is not an intent
	CodeConsole Code = "effector_console_refused" // a console request refused (origin, token, identity)
	CodeOutput  Code = "effector_output_failed"   // an output file could not be written
	// CodeToolUnregistered: no registered agent provides the intent's tool. The intent is
	// held back, never recorded, and runs once the tool is registered.
	CodeToolUnregistered Code = "effector_tool_unregistered"
	// CodeShadowIntent: the intent is a shadow agent's (intent.IsShadow). It is refused
	// before anything else, never executed, never recorded, and answered by no result: a
	// result would reach production's key under the same intent id.
	CodeShadowIntent Code = "effector_shadow_intent"

	CodeApprovalUnknown Code = "approval_unknown"   // no pending approval has that intent id
	CodeApprovalExpired Code = "approval_expired"   // the approval's deadline has passed
	CodeApprovalDecided Code = "approval_decided"   // a decision was already made (here or elsewhere)
	CodeIntentConflict  Code = "intent_id_conflict" // the id's recorded decision answered another call
)

// Error is a typed error of this package: "effector: CODE[: DETAIL][: CAUSE]". errors.Is
// matches on Code alone: errors.Is(err, ErrStore).
type Error = errs.Error[Code]

// storeFailed is a failure of the dedup store as this package reports it: CodeStore, wrapping
// the store's own error.
func storeFailed(err error) error { return &Error{Code: CodeStore, Detail: "dedup store", Err: err} }

// Sentinels for errors.Is.
var (
	ErrConfig  = &Error{Code: CodeConfig}
	ErrStore   = &Error{Code: CodeStore}
	ErrInput   = &Error{Code: CodeInput}
	ErrConsole = &Error{Code: CodeConsole}
	ErrOutput  = &Error{Code: CodeOutput}

	ErrToolUnregistered = &Error{Code: CodeToolUnregistered}
	ErrShadowIntent     = &Error{Code: CodeShadowIntent}

	ErrApprovalUnknown = &Error{Code: CodeApprovalUnknown}
	ErrApprovalExpired = &Error{Code: CodeApprovalExpired}
	ErrApprovalDecided = &Error{Code: CodeApprovalDecided}
	ErrIntentConflict  = &Error{Code: CodeIntentConflict}
)

// Reasons a ToolResult names in its error_message (before ": detail"); stable API.
const (
	ReasonExpired      = "expired"
	ReasonUnknownTool  = "unknown_tool"
	ReasonBadArguments = "bad_arguments"
	ReasonMalformed    = "malformed_intent"
	ReasonToolFailed   = "tool_failed"
	// ReasonIDConflict: the intent's id is already taken by another call (its content digest
	// differs from the one recorded or listed for that id); the tool did not run.
	ReasonIDConflict = "intent_id_conflict"
	// Signature refusals use intent.Outcome.Reason(): intent_unsigned, intent_bad_signature,
	// intent_unknown_key, intent_unsupported_scheme.
)
