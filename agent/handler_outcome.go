package agent

import (
	"context"
	"errors"
)

// contextKey keys the Context in the Go context it hands out.
type contextKey struct{}

// FromContext returns the handler run's Context that ctx, or a context derived from it,
// carries (Context.Context): how code called by a framework inside a handler (its model, its
// tools) finds the run it belongs to. It is valid only during that run.
func FromContext(ctx context.Context) (*Context, bool) {
	if ctx == nil {
		return nil, false
	}
	hc, ok := ctx.Value(contextKey{}).(*Context)
	return hc, ok && hc != nil
}

// Ending is what an error a handler's code received (possibly wrapped by a framework) means
// for the activation: see Outcome.
type Ending uint8

// The endings, in Outcome's order of precedence.
const (
	// Done: no error; the activation ends, with its reply if the handler set one.
	Done Ending = iota
	// Suspended: an operation suspended the activation (ErrSuspended).
	Suspended
	// Replied: an operation came after the reply (ErrReplied); the activation ends with it.
	Replied
	// Failed: the activation fails with the *Error's reason.
	Failed
	// Foreign: any other error, which fails the activation as internal_panic unless the code
	// maps it (a framework's step limit to budget_exceeded, say).
	Foreign
)

var endings = [...]string{"done", "suspended", "replied", "failed", "foreign"}

func (e Ending) String() string {
	if int(e) < len(endings) {
		return endings[e]
	}
	return "ending(" + itoa(int64(e)) + ")"
}

// Outcome classifies err, as a framework returned it, and returns what the handler returns
// for it: nil (Done, Replied), ErrSuspended unwrapped (Suspended), the *Error itself
// (Failed), or err (Foreign). A suspension takes precedence over a failure that wraps it.
func Outcome(err error) (Ending, error) {
	var ae *Error
	switch {
	case err == nil:
		return Done, nil
	case errors.Is(err, ErrSuspended):
		return Suspended, ErrSuspended
	case errors.Is(err, ErrReplied):
		return Replied, nil
	case errors.As(err, &ae):
		return Failed, ae
	}
	return Foreign, err
}
