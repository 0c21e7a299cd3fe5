package pubsub

import (
	"errors"
	"fmt"
)

// Code is the stable code of an Error.
type Code string

// Codes.
const (
	// CodeBadName: a flag is not a full resource name (projects/P/subscriptions/S or
	// projects/P/topics/T).
	CodeBadName Code = "bad_resource_name"
	// CodeMalformed: a message's data is not an AgentEnvelope in the encoding its
	// content-type attribute names, or the envelope is not actionable.
	CodeMalformed Code = "malformed_message"
	// CodeBadOptions: options that cannot work together.
	CodeBadOptions Code = "bad_options"
)

// Error is the package's typed error. errors.Is matches on Code alone:
// errors.Is(err, &Error{Code: CodeMalformed}).
type Error struct {
	Code   Code
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := "pubsub: " + string(e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

func errorf(code Code, err error, format string, args ...any) error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...), Err: err}
}
