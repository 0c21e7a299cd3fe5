package eino

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/compose"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/records"
)

type ctxKey struct{}

// Bind returns ctx carrying hc: the Model and the tools of this package answer through the
// Context found in their Go context.
func Bind(ctx context.Context, hc *agent.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, hc)
}

// ErrUnbound is returned by a Model or a tool called outside a handler run (no Bind).
var ErrUnbound = errors.New("eino adapter: called outside a handler run (no agent.Context in the Go context)")

func from(ctx context.Context) (*agent.Context, error) {
	hc, ok := ctx.Value(ctxKey{}).(*agent.Context)
	if !ok || hc == nil {
		return nil, ErrUnbound
	}
	return hc, nil
}

// Handler returns an agent.Handler whose body is run, called with a Go context bound to the
// run's agent.Context. The body's error is mapped by Outcome.
func Handler(run func(ctx context.Context, hc *agent.Context, tr agent.Trigger) error) agent.Handler {
	return func(hc *agent.Context, tr agent.Trigger) error {
		return Outcome(hc, run(Bind(hc.Context(), hc), hc, tr))
	}
}

// Outcome maps the error an Eino run returned to the handler's: a suspension (Eino wraps the
// tool's agent.ErrSuspended) suspends, a runtime failure keeps its reason, Eino's step limit
// fails the activation as budget_exceeded; any other error fails it as internal_panic.
func Outcome(hc *agent.Context, err error) error {
	var ae *agent.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, agent.ErrSuspended):
		return agent.ErrSuspended
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, compose.ErrExceedMaxSteps):
		return hc.Fail(records.ReasonBudgetExceeded, "the Eino run exceeded its step limit")
	}
	return fmt.Errorf("eino run: %w", err)
}
