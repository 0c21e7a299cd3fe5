package intent

import "fmt"

// Code is the stable code of an intent error; match it with errors.Is against the Err*
// sentinels, never on text.
type Code string

// Error codes.
const (
	CodeKeyring Code = "intent_keyring_invalid" // a keyring reference or document is unusable
	CodeSign    Code = "signing_failed"         // an intent could not be signed
	CodeVerify  Code = "intent_rejected"        // verification refused an intent under a Mode
)

// Error is the typed error of this package. Verify refusals carry the Outcome.
type Error struct {
	Code    Code
	Outcome Outcome // set for CodeVerify
	Detail  string
}

func (e *Error) Error() string {
	if e.Code == CodeVerify {
		return fmt.Sprintf("intent: %s: %s", e.Outcome, e.Detail)
	}
	return fmt.Sprintf("intent: %s: %s", e.Code, e.Detail)
}

// Is reports whether target is an *Error with the same Code (and, when the target names one,
// the same Outcome).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Code != e.Code {
		return false
	}
	return t.Outcome == 0 || t.Outcome == e.Outcome
}

// Sentinels for errors.Is.
var (
	ErrKeyring = &Error{Code: CodeKeyring}
	ErrSign    = &Error{Code: CodeSign}
	ErrVerify  = &Error{Code: CodeVerify}
)
