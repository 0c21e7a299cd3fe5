package model

import "github.com/beamagents/beamagents/internal/errs"

// Code is the stable code of a model error; match with errors.Is against the sentinels.
type Code string

// Error codes.
const (
	CodeNoScript  Code = "model_no_script" // Scripted has no response for the request
	CodeScript    Code = "model_script"    // a script document is malformed
	CodeProvider  Code = "model_provider"  // the provider failed or answered unusably
	CodeCancelled Code = "model_cancelled" // the caller cancelled a streaming call

	// Codes of hosted providers (model/openai, model/anthropic). Each ends a call for good:
	// the retryable failures have already been retried within the call's attempts.
	CodeUnavailable Code = "model_unavailable" // 429, 5xx or a broken connection on every attempt
	CodeTimeout     Code = "model_timeout"     // the call's deadline passed on every attempt
	CodeRejected    Code = "model_rejected"    // the provider refused the request (4xx other than 429)
	CodeRefusal     Code = "model_refusal"     // the model declined, or answered with no content
	CodeMalformed   Code = "model_malformed"   // the response or its event stream is not the API's
	CodeCredentials Code = "model_credentials" // the API key reference does not resolve
	// CodeCircuitOpen: the endpoint's circuit breaker refused the call without sending it
	// (model/limit): the endpoint failed repeatedly and is cooling down.
	CodeCircuitOpen Code = "model_circuit_open"
	// CodeToolName: a declared tool name no provider can carry: empty, holding a control
	// character or invalid UTF-8, declared twice, or mapping to the same wire name as another
	// declared tool (model/provider.ToolNames). Found before anything is sent.
	CodeToolName Code = "model_tool_name"
)

// Error is the typed error of this package: a Code, a Detail and the cause, if any.
// errors.Is matches it on the code alone. Its text is "model: CODE[: DETAIL][: CAUSE]".
type Error = errs.Error[Code]

// Sentinels for errors.Is.
var (
	ErrNoScript  = &Error{Code: CodeNoScript}
	ErrScript    = &Error{Code: CodeScript}
	ErrProvider  = &Error{Code: CodeProvider}
	ErrCancelled = &Error{Code: CodeCancelled}

	ErrUnavailable = &Error{Code: CodeUnavailable}
	ErrTimeout     = &Error{Code: CodeTimeout}
	ErrRejected    = &Error{Code: CodeRejected}
	ErrRefusal     = &Error{Code: CodeRefusal}
	ErrMalformed   = &Error{Code: CodeMalformed}
	ErrCredentials = &Error{Code: CodeCredentials}
	ErrCircuitOpen = &Error{Code: CodeCircuitOpen}
	ErrToolName    = &Error{Code: CodeToolName}
)
