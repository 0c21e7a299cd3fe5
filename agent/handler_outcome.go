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

// Outcome returns what a handler returns for err, an error its code got back from the
// runtime through a framework (possibly wrapped): nil for nil and ErrReplied (the activation
// ends, with its reply), ErrSuspended unwrapped, the *Error itself; any other error is
// returned as it is with foreign true: it fails the activation as internal_panic unless the
// code maps it (a framework's step limit to budget_exceeded, say). A suspension takes
// precedence over a failure that wraps it.
func Outcome(err error) (ret error, foreign bool) {
	var ae *Error
	switch {
	case err == nil:
		return nil, false
	case errors.Is(err, ErrSuspended):
		return ErrSuspended, false
	case errors.Is(err, ErrReplied):
		return nil, false
	case errors.As(err, &ae):
		return ae, false
	}
	return err, true
}
