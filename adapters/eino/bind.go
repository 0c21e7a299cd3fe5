package eino

import (
	"context"
	"errors"

	"github.com/cloudwego/eino/compose"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/records"
)

// ErrUnbound is returned by a Model or a tool called outside a handler run (a Go context
// without the run's agent.Context: agent.FromContext).
var ErrUnbound = errors.New("eino adapter: called outside a handler run (no agent.Context in the Go context)")

func from(ctx context.Context) (*agent.Context, error) {
	if hc, ok := agent.FromContext(ctx); ok {
		return hc, nil
	}
	return nil, ErrUnbound
}

// Handler returns an agent.Handler whose body is run, called with the run's Go context
// (agent.Context.Context, which carries the agent.Context). The body's error is mapped by
// Outcome.
func Handler(run func(ctx context.Context, hc *agent.Context, tr agent.Trigger) error) agent.Handler {
	return func(hc *agent.Context, tr agent.Trigger) error {
		return Outcome(hc, run(hc.Context(), hc, tr))
	}
}

// Outcome maps the error an Eino run returned to the handler's (agent.Outcome), with Eino's
// step limit failing the activation as budget_exceeded.
func Outcome(hc *agent.Context, err error) error {
	err, foreign := agent.Outcome(err)
	if foreign && errors.Is(err, compose.ErrExceedMaxSteps) {
		return hc.Fail(records.ReasonBudgetExceeded, "the Eino run exceeded its step limit")
	}
	return err
}
