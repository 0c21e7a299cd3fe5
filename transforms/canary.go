package transforms

import (
	"fmt"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/canary"
)

// Canary runs a stable slice of the keys on a candidate agent, for real (its intents are
// emitted and executed), and the rest on Options.Agent, the baseline, in the same stateful
// step: the canary adds no transform, state id or timer, so a relaunch with another
// percentage (or none) is an --update of the same pipeline. A key is in the slice when its
// bucket (package canary: SHA-256 of the entity key) is below Percent×100. An activation
// runs to its end on the agent that started it, whatever a relaunch made of the slice since
// (host.WithCanary).
type Canary struct {
	// Agent is the candidate, a registered agent other than Options.Agent, built from
	// Options.Config too; empty runs no canary.
	Agent string
	// Percent is the share of the keys the candidate starts activations on, 0 to 100 with a
	// resolution of 0.01.
	Percent float64
}

// On reports whether c runs a canary.
func (c Canary) On() bool { return c.Agent != "" }

// check validates c beside the baseline agent: the candidate is registered, builds, is not
// the baseline and shares its state schema; the percentage is within 0–100.
func (c Canary) check(baseline *agent.Agent, config []byte) error {
	if !c.On() {
		return nil
	}
	_, err := c.route(baseline, config)
	return err
}

// route returns baseline routing c's slice to the candidate (baseline itself without a
// canary).
func (c Canary) route(baseline *agent.Agent, config []byte) (*agent.Agent, error) {
	if !c.On() {
		return baseline, nil
	}
	slice, err := canary.FromPercent(c.Percent)
	if err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	cand, err := agent.Build(c.Agent, config)
	if err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	routed, err := host.WithCanary(baseline, cand, slice)
	if err != nil {
		return nil, fmt.Errorf("canary: %w", err)
	}
	return routed, nil
}
