package statecodec

import "fmt"

// Code is the stable code of a statecodec error; match it with errors.Is against the Err*
// sentinels, never on text. The three decode codes double as dead-letter reasons: an
// activation that hits one commits nothing and leaves every cell as it was.
type Code string

// Error codes.
const (
	// CodeCorrupt: a cell's bytes do not parse as its encoding.
	CodeCorrupt Code = "state_corrupt"
	// CodeFutureVersion: a cell was written at a state_schema_version above this binary's; it
	// wraps migrate.ErrFutureVersion.
	CodeFutureVersion Code = "state_version_future"
	// CodeMigration: a migration step refused a cell; it wraps migrate.ErrStepFailed.
	CodeMigration Code = "state_migration_failed"
	// CodeInvalidArgument: a caller passed a value the cell cannot hold (a malformed cache key,
	// a non-UTF-8 memory key, an inconsistent suspension, ...). Nothing was changed.
	CodeInvalidArgument Code = "state_argument_invalid"
	// CodeTooLarge: a value can never fit the cell's cap. Nothing was changed.
	CodeTooLarge Code = "state_value_too_large"
	// CodeEncode: a cell could not be serialized.
	CodeEncode Code = "state_encode_failed"
)

// Error is the typed error of this package; Cell names the state cell concerned.
type Error struct {
	Code   Code
	Cell   Cell
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("statecodec: %s: %s", e.Cell, e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error (a parse error, or a *migrate.Error).
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code (and, when the target names one,
// the same Cell).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Code != e.Code {
		return false
	}
	return t.Cell == "" || t.Cell == e.Cell
}

// Sentinels for errors.Is.
var (
	ErrCorrupt         = &Error{Code: CodeCorrupt}
	ErrFutureVersion   = &Error{Code: CodeFutureVersion}
	ErrMigration       = &Error{Code: CodeMigration}
	ErrInvalidArgument = &Error{Code: CodeInvalidArgument}
	ErrTooLarge        = &Error{Code: CodeTooLarge}
	ErrEncode          = &Error{Code: CodeEncode}
)

func invalid(cell Cell, format string, args ...any) error {
	return &Error{Code: CodeInvalidArgument, Cell: cell, Detail: fmt.Sprintf(format, args...)}
}
