package agent

import (
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/canary"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// route is a canary: the keys of a slice start their activations on a candidate agent, the
// others on the baseline (the agent holding the route); a suspended activation resumes on
// the agent that started it, which its continuation records.
type route struct {
	baseline, candidate *Agent
	slice               canary.Slice
}

// withCanary is host.WithCanary, which documents it: a copy of a (the baseline) whose calls
// route between a and candidate. A suspension without a recorded agent was started by a run
// without a canary, whose agent was the baseline, and so was one naming neither agent.
func (a *Agent) withCanary(candidate *Agent, slice canary.Slice) (*Agent, error) {
	switch {
	case candidate == nil || candidate.def.Name == a.def.Name:
		return nil, defErr("the canary's candidate must be another agent than %s", a.def.Name)
	case a.canary != nil || candidate.canary != nil:
		return nil, defErr("a canary's agents cannot themselves run a canary")
	case slice > canary.Buckets:
		return nil, defErr("a canary slice of %d buckets is over %d", slice, canary.Buckets)
	}
	if bv, cv := a.schema.Current(), candidate.schema.Current(); bv != cv {
		return nil, defErr("canary %s cannot share the state of %s: state schema version %d, not %d", candidate.def.Name, a.def.Name, cv, bv)
	}
	b := *a
	b.canary = &route{baseline: a, candidate: candidate, slice: slice}
	return &b, nil
}

// starting is the agent that starts a new activation of key.
func (r *route) starting(key []byte) *Agent {
	if r.slice.Contains(key) {
		return r.candidate
	}
	return r.baseline
}

// recorded is the agent a continuation names as its activation's; the baseline for none.
func (r *route) recorded(name string) *Agent {
	if name == r.candidate.def.Name {
		return r.candidate
	}
	return r.baseline
}

// routeCall sets the agent of a call on a key of a routing agent: the one that started the
// key's suspended activation, else the one that starts the key's activations. A continuation
// that does not decode leaves the baseline, whose reading of it fails the call.
func (c *call) routeCall() {
	if c.route == nil {
		return
	}
	raw, err := c.cells.initial(contCell)
	if err != nil || len(raw) == 0 {
		c.a = c.route.starting(c.entity)
		return
	}
	var cont pb.Continuation
	if proto.Unmarshal(raw, &cont) != nil {
		c.a = c.route.baseline
		return
	}
	c.a = c.route.recorded(cont.GetAgent())
}

// routeStart sets the agent of an activation that starts (the slice decides).
func (c *call) routeStart() {
	if c.route != nil {
		c.a = c.route.starting(c.entity)
	}
}

// routeResume sets the agent of a suspended activation that resumes (its record decides).
func (c *call) routeResume(recorded string) {
	if c.route != nil {
		c.a = c.route.recorded(recorded)
	}
}

// startedBy is what a suspension records as the agent that started it: empty without a
// canary, so a run without one writes the state it always wrote.
func (c *call) startedBy() string {
	if c.route == nil {
		return ""
	}
	return c.a.def.Name
}
