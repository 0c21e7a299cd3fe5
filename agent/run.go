package agent

import (
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// adapter is the Continuation.adapter of a suspension owned by this package; its snapshot is
// a binary AgentResume.
const adapter = "beamagents.agent.v1"

// activation is the state of one activation while it runs.
type activation struct {
	c      *call
	v      *view
	out    *Outputs
	tr     *tracer
	resume *pb.AgentResume
	seq    int64
	// receipt holds the conformance-receipt attributes of the next emitted intent's arguments.
	receipt map[string]string
	// journal is a handler activation's journal (nil for a bindings agent), last the step its
	// end reports.
	journal *pb.HandlerJournal
	last    uint32
}

func (c *call) startActivation(v *view, out *Outputs, trigger *pb.AgentEnvelope) error {
	act := &activation{c: c, v: v, out: out, seq: v.seq}
	out.Traces = slices.Grow(out.Traces, 4) // at least its start, a model call and its end
	act.tr = newTracer(c.a.def.Name, c.entity, v.seq, out)
	// The trigger is only read (by the prompt) and serialized (by a suspension) within this
	// activation, so the resume state can refer to it instead of a copy.
	act.resume = &pb.AgentResume{Trigger: trigger, TraceId: act.tr.id}
	act.tr.begin(tracing.KindExternalEvent, 0, c.now)
	if c.a.def.Handler != nil {
		return act.startHandler(trigger)
	}
	return act.steps(0)
}

// resumeActivation rebuilds the suspended activation of v's continuation and opens the attempt
// driven by kind. A result or an approval enters at the step after the suspended one (the
// step it resumes at); a deadline firing enters at the suspended step itself.
func (c *call) resumeActivation(v *view, out *Outputs, kind string) (*activation, error) {
	want := adapter
	if c.a.def.Handler != nil {
		want = handlerAdapter
	}
	if a := v.cont.Adapter(); a != want {
		return nil, fail(ReasonStateCorrupt, nil, "continuation adapter %q is not %q", a, want)
	}
	act := &activation{c: c, v: v, out: out, seq: v.cont.Seq(), last: v.cont.StepIndex()}
	if want == handlerAdapter {
		if err := act.resumeJournal(v.cont.Snapshot()); err != nil {
			return nil, err
		}
	} else {
		act.resume = &pb.AgentResume{}
		if err := proto.Unmarshal(v.cont.Snapshot(), act.resume); err != nil {
			return nil, fail(ReasonStateCorrupt, err, "continuation snapshot")
		}
	}
	act.tr = newTracer(c.a.def.Name, c.entity, act.seq, out)
	entry := v.cont.StepIndex()
	if kind != tracing.KindTimer {
		entry++
	}
	act.tr.begin(kind, entry, c.now)
	return act, nil
}

// steps runs the step loop from step start until the activation ends or suspends.
func (act *activation) steps(start uint32) error {
	a, v := act.c.a, act.v
	if err := v.need(memoryCell, cacheCell); err != nil {
		return err
	}
	for step := start; ; step++ {
		if step >= a.limits.MaxSteps {
			return fail(ReasonBudgetExceeded, nil, "activation reached its %d-step budget", a.limits.MaxSteps)
		}
		val, err := act.propose(step)
		if err != nil {
			return err
		}
		bindID := val.CaseID()
		if bindID == "" {
			bindID = val.TypeID()
		}
		action := a.def.Bindings[bindID]
		rec := &pb.StepRecord{StepIndex: step, CaseId: val.CaseID(), Proposal: val.CanonicalString()}
		act.resume.Steps = append(act.resume.Steps, rec)
		switch action.Kind {
		case ActFinal:
			if err := act.final(step, val); err != nil {
				return err
			}
			return act.end(tracing.StatusOK)
		case ActRemember:
			if err := act.remember(val, action); err != nil {
				return err
			}
		case ActTool, ActApproval:
			kind, timeout := pb.ToolIntent_TOOL, a.limits.ToolTimeoutMs
			if action.Kind == ActApproval {
				kind, timeout = pb.ToolIntent_APPROVAL, a.limits.ApprovalTimeoutMs
			}
			args, receipt, err := act.toolArgs(bindID, val)
			if err != nil {
				return err
			}
			ti, err := act.newIntent(step, action.Tool, args, kind, timeout)
			if err != nil {
				return err
			}
			rec.IntentId = ti.IntentId
			act.receipt = receipt
			return act.suspend(step, ti)
		default:
			return fail(ReasonInternalPanic, nil, "case %s has no action", bindID)
		}
	}
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
	step := act.last
	if act.journal == nil {
		step = lastStep(act.resume)
	}
	act.tr.finish(status, step, act.c.now)
	return nil
}

func lastStep(r *pb.AgentResume) uint32 {
	if n := len(r.GetSteps()); n > 0 {
		return r.Steps[n-1].GetStepIndex()
	}
	return 0
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
	if act.c.deps.Keyring == nil {
		if act.c.deps.AllowUnsigned {
			return nil
		}
		return fail(ReasonSigningFailed, nil, "no keyring to sign intent %s", ti.IntentId)
	}
	if err := intent.Sign(ti, act.c.deps.Keyring); err != nil {
		return fail(ReasonSigningFailed, err, "intent %s", ti.IntentId)
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

// toolArgs renders the case's fields as the intent's canonical arguments; a case bound to a
// declared tool crosses the negotiated boundary first, with its conformance receipt.
func (act *activation) toolArgs(caseID string, val *interaction.Value) (string, map[string]string, error) {
	b, ok := act.c.a.boundaries[caseID]
	if !ok {
		return string(val.FieldsJSON()), nil, nil
	}
	out, err := b.Convey(val)
	if err != nil {
		return "", nil, fail(ReasonProposalRefused, err, "arguments for the tool of %s", caseID)
	}
	return string(out.Value.FieldsJSON()), out.Receipt.Attributes(), nil
}

// suspend emits ti, records it as pending and suspends the activation until it resolves.
func (act *activation) suspend(step uint32, ti *pb.ToolIntent) error {
	v := act.v
	if err := v.need(pendingCell); err != nil {
		return err
	}
	if err := v.pending.Add(ti); err != nil {
		return fail(ReasonStateCorrupt, err, "recording intent %s", ti.IntentId)
	}
	v.touch(pendingCell)
	snap, err := proto.MarshalOptions{Deterministic: true}.Marshal(act.resume)
	if err != nil {
		return fail(ReasonStateCorrupt, err, "encoding resume state")
	}
	cont, err := act.v.contOpts().Suspend(statecodec.Suspension{
		Seq: act.seq, StepIndex: step, PendingIntentIDs: []string{ti.IntentId}, Adapter: adapter,
		Snapshot: snap, SuspendedAtMs: act.c.now, DeadlineMs: ti.ExpiresAtMs,
	})
	if err != nil {
		return fail(ReasonStateCorrupt, err, "suspending")
	}
	v.cont = cont
	v.touch(contCell)
	act.emitIntent(ti)
	act.tr.emit(pb.TraceEvent_SUSPENDED, step, act.c.now, map[string]string{
		tracing.AttrPendingIntents: "1", tracing.AttrDeadline: itoa(ti.ExpiresAtMs), tracing.AttrIntentID: ti.IntentId,
	})
	act.tr.finish(tracing.StatusSuspended, step, act.c.now)
	return nil
}

func (act *activation) remember(val *interaction.Value, action Action) error {
	k, _ := val.Lookup(action.KeyField)
	fv, _ := val.Lookup(action.ValueField)
	var value []byte
	if fv.Representation() == interaction.Bytes {
		value = fv.Bytes()
	} else {
		value = []byte(fv.Text())
	}
	act.v.ownMemory()
	if err := act.v.memory.Put(k.Text(), value, act.c.now); err != nil {
		return fail(ReasonBudgetExceeded, err, "memory write of key %q", k.Text())
	}
	act.v.touch(memoryCell)
	return nil
}
