package agent

import (
	"bytes"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Burst gathers a key's external events that fall close together in event time into one
// activation: a customer who sends three messages in ten seconds costs one activation (one
// model call, one reply) instead of three. The zero value (Window 0) runs every event on its
// own, exactly as an agent without it.
//
// A burst begins with an external event that would run an activation and holds every later
// external event of the key whose event time falls in [first, first+Window), in processing
// order (event time, ties by the envelopes' bytes), up to MaxEvents events and MaxBytes bytes
// of events; an event the bounds leave out begins the next burst. The window is aligned to
// the burst's first event, never to the clock, so the bursts depend only on the events'
// times and bytes, not on the order they arrive in. A burst runs once the watermark passes
// its window's end, in place of its first event: inputs after the first event (tool results,
// approvals, signals, export requests, core timers) run after it. docs/agents.md, Bursts.
type Burst struct {
	// Window is the event-time span of a burst from its first event, in whole milliseconds;
	// 0 disables bursts.
	Window time.Duration
	// MaxEvents bounds the events of one burst; 0 selects 16.
	MaxEvents int
	// MaxBytes bounds the bytes of one burst's events (their payloads, summed); 0 selects
	// 65,536. A first event larger than it still runs, alone.
	MaxBytes int
}

// Defaults of Burst.
const (
	defaultBurstEvents = 16
	defaultBurstBytes  = 64 << 10
)

// BurstSeparator joins the events of a burst in Trigger.Event, and so in a bindings agent's
// prompt input.
const BurstSeparator = "\n"

// On reports whether bursts are enabled.
func (b Burst) On() bool { return b.Window > 0 }

// WindowMs returns the window in milliseconds.
func (b Burst) WindowMs() int64 { return b.Window.Milliseconds() }

func (b Burst) check(name string) error {
	switch {
	case b.Window < 0 || b.MaxEvents < 0 || b.MaxBytes < 0:
		return defErr("agent %s: Burst has a negative bound", name)
	case b.Window%time.Millisecond != 0:
		return defErr("agent %s: Burst.Window %v is not a whole number of milliseconds", name, b.Window)
	}
	return nil
}

func (b Burst) resolved() Burst {
	if b.MaxEvents == 0 {
		b.MaxEvents = defaultBurstEvents
	}
	if b.MaxBytes == 0 {
		b.MaxBytes = defaultBurstBytes
	}
	return b
}

// Burst returns the agent's resolved Burst option (Definition.Burst).
func (a *Agent) Burst() Burst { return a.def.Burst.resolved() }

// Joins reports whether env joins a burst that began at event time firstMs and holds n events
// of size bytes so far: an external event inside the window that keeps the burst within its
// bounds.
func (b Burst) Joins(firstMs int64, n, size int, env *pb.AgentEnvelope) bool {
	p, ok := env.GetPayload().(*pb.AgentEnvelope_ExternalEvent)
	return ok && env.GetEventTimeMs() < firstMs+b.WindowMs() && n < b.MaxEvents && size+len(p.ExternalEvent) <= b.MaxBytes
}

// Gather splits envs, external events in processing order whose first begins a burst, into
// the burst's events and the others, in order. Both runtimes' gathering (the shells'
// ordering buffer and the inbox) is this one rule.
func (b Burst) Gather(envs []*pb.AgentEnvelope) (burst, others []*pb.AgentEnvelope) {
	if len(envs) == 0 {
		return nil, nil
	}
	first := envs[0]
	burst = []*pb.AgentEnvelope{first}
	size := len(first.GetExternalEvent())
	for _, env := range envs[1:] {
		if b.Joins(first.GetEventTimeMs(), len(burst), size, env) {
			burst = append(burst, env)
			size += len(env.GetExternalEvent())
			continue
		}
		others = append(others, env)
	}
	return burst, others
}

// BurstEvent is one external event of a burst activation.
type BurstEvent struct {
	EventTimeMs int64
	Event       []byte
}

// Events returns the activation's external events in processing order: the burst's
// (Trigger.Batch), or the one event.
func (t Trigger) Events() []BurstEvent {
	if t.Batch != nil {
		return t.Batch
	}
	return []BurstEvent{{EventTimeMs: t.EventTimeMs, Event: t.Event}}
}

// triggerOf is the trigger of the activation whose journal is j: its first event, and with a
// burst every event and their concatenation.
func triggerOf(entity []byte, seq int64, j *pb.HandlerJournal) Trigger {
	env := j.GetTrigger()
	t := Trigger{EntityKey: entity, Seq: seq, EventTimeMs: env.GetEventTimeMs(), Event: env.GetExternalEvent()}
	if len(j.GetBurst()) == 0 {
		return t
	}
	t.Batch = append(make([]BurstEvent, 0, 1+len(j.GetBurst())), BurstEvent{t.EventTimeMs, t.Event})
	parts := [][]byte{t.Event}
	for _, e := range j.GetBurst() {
		t.Batch = append(t.Batch, BurstEvent{e.GetEventTimeMs(), e.GetExternalEvent()})
		parts = append(parts, e.GetExternalEvent())
	}
	t.Event = bytes.Join(parts, []byte(BurstSeparator))
	return t
}
