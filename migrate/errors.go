package migrate

import (
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Code is the stable code of a migration error; match it with errors.Is against the Err*
// sentinels, never on text.
type Code string

// Error codes.
const (
	// CodeFutureVersion: the blob's version is above the current one. The blob must be kept as
	// it is (dead letter upstream), never rewritten by this binary.
	CodeFutureVersion Code = "state_version_future"
	// CodeUnversioned: the message is not a versioned keyed-state message (or is nil).
	CodeUnversioned Code = "state_message_unversioned"
	// CodeStepFailed: a registered step refused the blob.
	CodeStepFailed Code = "state_migration_failed"
	// CodeRegistry: a registry definition is incomplete or inconsistent.
	CodeRegistry Code = "migration_registry_invalid"
)

// Error is the typed error of this package.
type Error struct {
	Code    Code
	Message protoreflect.FullName // the message concerned, when known
	Version uint32                // the blob's version (for a failed step: the step's From)
	Current uint32                // the registry's current version
	Detail  string
	Err     error // the step's own error, for CodeStepFailed
}

func (e *Error) Error() string {
	s := fmt.Sprintf("migrate: %s", e.Code)
	if e.Message != "" {
		s += fmt.Sprintf(": %s", e.Message)
	}
	switch e.Code {
	case CodeFutureVersion:
		s += fmt.Sprintf(": version %d is newer than this binary's %d", e.Version, e.Current)
	case CodeStepFailed:
		s += fmt.Sprintf(": step %d→%d", e.Version, e.Version+1)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the step's error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrFutureVersion = &Error{Code: CodeFutureVersion}
	ErrUnversioned   = &Error{Code: CodeUnversioned}
	ErrStepFailed    = &Error{Code: CodeStepFailed}
	ErrRegistry      = &Error{Code: CodeRegistry}
)

func registryErr(format string, args ...any) error {
	return &Error{Code: CodeRegistry, Detail: fmt.Sprintf(format, args...)}
}
