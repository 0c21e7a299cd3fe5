package burst

import (
	"fmt"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Rule gathers a key's external events that fall close together in event time into one
// activation. A burst runs once the watermark passes its window's end, in place of its first
// event: inputs after the first event (tool results, approvals, signals, export requests,
// core timers) run after it.
type Rule struct {
	// Window is the event-time span of a burst from its first event, in whole milliseconds;
	// 0 disables bursts.
	Window time.Duration
	// MaxEvents bounds the events of one burst; 0 selects 16.
	MaxEvents int
	// MaxBytes bounds the bytes of one burst's events (their payloads, summed); 0 selects
	// 65,536. A first event larger than it still runs, alone.
	MaxBytes int
}

// Defaults of Rule.
const (
	defaultEvents = 16
	defaultBytes  = 64 << 10
)

// Separator joins the events of a burst in agent.Trigger.Event, and so in a bindings agent's
// prompt input.
const Separator = "\n"

// Event is one external event of a burst activation.
type Event struct {
	EventTimeMs int64
	Event       []byte
}

// On reports whether bursts are enabled.
func (r Rule) On() bool { return r.Window > 0 }

// WindowMs returns the window in milliseconds.
func (r Rule) WindowMs() int64 { return r.Window.Milliseconds() }

// Check refuses a rule with a negative bound or a window that is not whole milliseconds.
func (r Rule) Check() error {
	switch {
	case r.Window < 0 || r.MaxEvents < 0 || r.MaxBytes < 0:
		return fmt.Errorf("the burst rule has a negative bound")
	case r.Window%time.Millisecond != 0:
		return fmt.Errorf("the burst window %v is not a whole number of milliseconds", r.Window)
	}
	return nil
}

// Resolved returns the rule with its zero bounds replaced by their defaults.
func (r Rule) Resolved() Rule {
	if r.MaxEvents == 0 {
		r.MaxEvents = defaultEvents
	}
	if r.MaxBytes == 0 {
		r.MaxBytes = defaultBytes
	}
	return r
}

// Joins reports whether env joins a burst that began at event time firstMs and holds n events
// of size bytes so far: an external event inside the window that keeps the burst within its
// bounds. r is resolved (Resolved).
func (r Rule) Joins(firstMs int64, n, size int, env *pb.AgentEnvelope) bool {
	p, ok := env.GetPayload().(*pb.AgentEnvelope_ExternalEvent)
	return ok && env.GetEventTimeMs() < firstMs+r.WindowMs() && n < r.MaxEvents && size+len(p.ExternalEvent) <= r.MaxBytes
}

// Gather splits envs, external events in processing order whose first begins a burst, into
// the burst's events and the others, in order. Both runtimes' gathering (the shells'
// ordering buffer and the inbox) is this one rule.
func (r Rule) Gather(envs []*pb.AgentEnvelope) (burst, others []*pb.AgentEnvelope) {
	if len(envs) == 0 {
		return nil, nil
	}
	first := envs[0]
	burst = []*pb.AgentEnvelope{first}
	size := len(first.GetExternalEvent())
	for _, env := range envs[1:] {
		if r.Joins(first.GetEventTimeMs(), len(burst), size, env) {
			burst = append(burst, env)
			size += len(env.GetExternalEvent())
			continue
		}
		others = append(others, env)
	}
	return burst, others
}
