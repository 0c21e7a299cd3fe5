package agent

import (
	"bytes"

	"github.com/beamagents/beamagents/agent/burst"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Burst returns the agent's resolved burst rule (Definition.Burst).
func (a *Agent) Burst() burst.Rule { return a.def.Burst.Resolved() }

// Events returns the activation's external events in processing order: the burst's
// (Trigger.Batch), or the one event.
func (t Trigger) Events() []burst.Event {
	if t.Batch != nil {
		return t.Batch
	}
	return []burst.Event{{EventTimeMs: t.EventTimeMs, Event: t.Event}}
}

// triggerOf is the trigger of the activation whose journal is j: its first event, and with a
// burst every event and their concatenation.
func triggerOf(entity []byte, seq int64, j *pb.HandlerJournal) Trigger {
	env := j.GetTrigger()
	t := Trigger{EntityKey: entity, Seq: seq, EventTimeMs: env.GetEventTimeMs(), Event: env.GetExternalEvent()}
	if len(j.GetBurst()) == 0 {
		return t
	}
	t.Batch = append(make([]burst.Event, 0, 1+len(j.GetBurst())), burst.Event{EventTimeMs: t.EventTimeMs, Event: t.Event})
	parts := [][]byte{t.Event}
	for _, e := range j.GetBurst() {
		t.Batch = append(t.Batch, burst.Event{EventTimeMs: e.GetEventTimeMs(), Event: e.GetExternalEvent()})
		parts = append(parts, e.GetExternalEvent())
	}
	t.Event = bytes.Join(parts, []byte(burst.Separator))
	return t
}
