package agent

import (
	"maps"
	"slices"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// activation is the state of one activation while it runs.
type activation struct {
	c   *call
	v   *view
	out *hostapi.Outputs
	tr  *tracer
	seq int64
	// journal is the activation's journal: its trigger, budgets and completed operations
	// (for a bindings agent, its steps); last is the step its end reports.
	journal *pb.HandlerJournal
	last    uint32
	// receipt holds the conformance-receipt attributes of the next emitted intent's arguments.
	receipt map[string]string
	// resumed: the activation was suspended when the call began, so signals may be queued for it.
	resumed bool
}

// startActivation runs a new activation of trigger, with the further events of its burst.
func (c *call) startActivation(v *view, out *hostapi.Outputs, trigger *pb.AgentEnvelope, burst ...*pb.AgentEnvelope) error {
	c.routeStart()
	act := &activation{c: c, v: v, out: out, seq: v.seq}
	out.Traces = slices.Grow(out.Traces, 4) // at least its start, a model call and its end
	act.tr = newTracer(c.a.def.Name, c.entity, v.seq, out)
	act.tr.begin(tracing.KindExternalEvent, 0, c.now)
	// The trigger is only read (by the handler) and serialized (by a suspension) within this
	// activation, so the journal can refer to it instead of a copy.
	act.journal = &pb.HandlerJournal{JournalVersion: journalVersion, Trigger: trigger, Burst: burst, TraceId: act.tr.id}
	if c.a.def.Budget != nil {
		d := c.a.degrade(trigger)
		budgetAttrs(out, c.a.def.Budget, trigger.GetBudgetGrant(), d)
		if d != nil {
			if done, err := act.overBudget(d); done {
				return err
			}
		}
	}
	return act.handle()
}

// resumeActivation rebuilds the suspended activation of v's continuation and opens the attempt
// driven by kind. A result or an approval enters at the step after the suspended one (the
// step it resumes at); a deadline firing enters at the suspended step itself.
func (c *call) resumeActivation(v *view, out *hostapi.Outputs, kind string) (*activation, error) {
	act, err := c.suspendedActivation(v, out)
	if err != nil {
		return nil, err
	}
	entry := v.cont.StepIndex()
	if kind != tracing.KindTimer {
		entry++
	}
	act.tr.begin(kind, entry, c.now)
	return act, nil
}

// suspendedActivation rebuilds the suspended activation of v's continuation without opening
// an attempt: its journal decoded, its tracer ready.
func (c *call) suspendedActivation(v *view, out *hostapi.Outputs) (*activation, error) {
	c.routeResume(v.cont.Agent())
	want := c.a.adapter()
	if a := v.cont.Adapter(); a != want {
		return nil, fail(records.ReasonStateCorrupt, nil, "continuation adapter %q is not %q", a, want)
	}
	act := &activation{c: c, v: v, out: out, seq: v.cont.Seq(), last: v.cont.StepIndex(), resumed: true}
	if err := act.decodeJournal(v.cont.Snapshot()); err != nil {
		return nil, err
	}
	act.tr = newTracer(c.a.def.Name, c.entity, act.seq, out)
	return act, nil
}

// end closes the activation: the key's counter moves on and nothing stays suspended. The
// committed counter equals act.seq while the activation runs, so it need not be read.
func (act *activation) end(status string) error {
	v := act.v
	v.seq = act.seq + 1
	v.touch(seqCell)
	if v.cont != nil {
		v.cont = nil
		v.touch(contCell)
	}
	act.tr.finish(status, act.last, act.c.now)
	return nil
}

// newIntent builds and signs the intent of a step.
func (act *activation) newIntent(step uint32, tool, args string, kind pb.ToolIntent_Kind, timeoutMs int64) (*pb.ToolIntent, error) {
	c := act.c
	ti := &pb.ToolIntent{
		IntentId:    intent.ID(c.entity, act.seq, step),
		EntityKey:   c.entity,
		Seq:         act.seq,
		StepIndex:   step,
		ToolName:    tool,
		ArgsJson:    args,
		CreatedAtMs: c.now,
		ExpiresAtMs: c.now + timeoutMs,
		Kind:        kind,
		TraceId:     act.tr.id,
	}
	if err := act.sign(ti); err != nil {
		return nil, err
	}
	return ti, nil
}

func (act *activation) sign(ti *pb.ToolIntent) error {
	if act.c.deps.Shadow {
		intent.MarkShadow(ti)
		return nil
	}
	if act.c.deps.Keyring == nil {
		if act.c.deps.AllowUnsigned {
			return nil
		}
		return fail(records.ReasonSigningFailed, nil, "no keyring to sign intent %s", ti.IntentId)
	}
	if err := intent.Sign(ti, act.c.deps.Keyring); err != nil {
		return fail(records.ReasonSigningFailed, err, "intent %s", ti.IntentId)
	}
	return nil
}

func (act *activation) emitIntent(ti *pb.ToolIntent) {
	act.out.Intents = append(act.out.Intents, ti)
	attrs := map[string]string{
		tracing.AttrIntentID:   ti.IntentId,
		tracing.AttrIntentKind: ti.Kind.String(),
		tracing.AttrAttempts:   itoa(int64(ti.Attempt) + 1),
		tracing.AttrToolName:   ti.ToolName,
		tracing.AttrExpiresAt:  itoa(ti.ExpiresAtMs),
	}
	maps.Copy(attrs, act.receipt)
	act.receipt = nil
	act.tr.emit(pb.TraceEvent_INTENT_EMITTED, ti.StepIndex, act.c.now, attrs)
}
