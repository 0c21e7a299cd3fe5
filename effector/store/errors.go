package store

import "fmt"

// Code is a stable error code of this package.
type Code string

// Codes.
const (
	CodeFailed Code = "effector_store_failed"      // the store failed (I/O, connection, a corrupt record)
	CodeRef    Code = "effector_store_ref_invalid" // a store reference Open cannot use
)

// Error is a typed error of this package.
type Error struct {
	Code   Code
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("effector/store: %s: %s", e.Code, e.Detail)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrFailed = &Error{Code: CodeFailed}
	ErrRef    = &Error{Code: CodeRef}
)
