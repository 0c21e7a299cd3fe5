package agent

import (
	"fmt"

	"github.com/beamagents/beamagents/records"
)

// Error is the typed error of an activation. Its Reason is the dead-letter reason the failure
// ends in; errors.Is(err, &agent.Error{Reason: r}) matches on the reason alone.
type Error struct {
	Reason records.Reason
	Detail string
	Err    error // the underlying typed error (an interaction, statecodec, intent or model error)
}

func (e *Error) Error() string {
	switch {
	case e.Err != nil && e.Detail != "":
		return fmt.Sprintf("%s: %s: %v", e.Reason, e.Detail, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("%s: %v", e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Reason, e.Detail)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches an *Error with the same Reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason == e.Reason
}

func fail(r records.Reason, err error, format string, args ...any) *Error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...), Err: err}
}
