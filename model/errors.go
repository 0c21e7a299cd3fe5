package model

import "fmt"

// Code is the stable code of a model error; match with errors.Is against the sentinels.
type Code string

// Error codes.
const (
	CodeNoScript  Code = "model_no_script" // Scripted has no response for the request
	CodeScript    Code = "model_script"    // a script document is malformed
	CodeProvider  Code = "model_provider"  // the provider failed or answered unusably
	CodeCancelled Code = "model_cancelled" // the caller cancelled a streaming call
)

// Error is the typed error of this package.
type Error struct {
	Code   Code
	Detail string
	Err    error // cause, if any
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("model: %s: %s: %v", e.Code, e.Detail, e.Err)
	}
	return fmt.Sprintf("model: %s: %s", e.Code, e.Detail)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrNoScript  = &Error{Code: CodeNoScript}
	ErrScript    = &Error{Code: CodeScript}
	ErrProvider  = &Error{Code: CodeProvider}
	ErrCancelled = &Error{Code: CodeCancelled}
)
