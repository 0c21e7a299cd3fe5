package agent

import (
	"bytes"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// toolResult resolves a pending TOOL intent and resumes the activation once nothing is
// pending.
func (c *call) toolResult(v *view, out *hostapi.Outputs, r *pb.ToolResult) error {
	if err := v.need(contCell, pendingCell); err != nil {
		return err
	}
	id := r.GetIntentId()
	ti, ok := v.pending.Get(id)
	switch {
	case !ok || v.cont == nil || !v.cont.IsPending(id) || answeredLate(v.cont, c.now):
		// A result at or after a durable wait's deadline loses to the wake, whether it comes
		// before the timer fires or after: the same dead letter either way.
		return fail(records.ReasonOrphanedResult, nil, "no pending intent %q", id)
	case ti.GetKind() == pb.ToolIntent_APPROVAL:
		return fail(records.ReasonOrphanedResult, nil, "intent %s awaits an approval, not a tool result", id)
	case len(r.GetEntityKey()) > 0 && !bytes.Equal(r.GetEntityKey(), c.entity), r.GetSeq() != ti.GetSeq():
		return fail(records.ReasonOrphanedResult, nil, "result for %s names seq %d, the intent has seq %d", id, r.GetSeq(), ti.GetSeq())
	}
	if err := c.checkResult(r, ti); err != nil {
		return err
	}
	act, err := c.resumeActivation(v, out, tracing.KindToolResult)
	if err != nil {
		return err
	}
	if err := act.recordResult(id, r); err != nil {
		return err
	}
	act.tr.emit(pb.TraceEvent_TOOL_CALL, ti.GetStepIndex(), c.now, toolCallAttrs(ti, r))
	return act.resolve(ti, act.handle)
}

// toolCallAttrs are the attributes of the TOOL_CALL event of result r answering ti.
func toolCallAttrs(ti *pb.ToolIntent, r *pb.ToolResult) map[string]string {
	attrs := map[string]string{
		tracing.AttrOperationName: tracing.OpExecuteTool,
		tracing.AttrGenAIToolName: ti.GetToolName(),
		tracing.AttrToolName:      ti.GetToolName(),
		tracing.AttrIntentID:      ti.GetIntentId(),
		tracing.AttrToolStatus:    r.GetStatus().String(),
	}
	if r.GetStatus() != pb.ToolResult_OK {
		attrs[tracing.AttrErrorType] = r.GetStatus().String()
	}
	return attrs
}

// recordResult records tool result r of intent id in the journal.
func (act *activation) recordResult(id string, r *pb.ToolResult) error {
	e, err := act.entry(id)
	if err != nil {
		return err
	}
	e.ToolResult = proto.CloneOf(r)
	return nil
}

// approval records the decision on a pending APPROVAL intent and resumes the activation with
// it (approved, the agent emits the gated tool intent at the next step).
func (c *call) approval(v *view, out *hostapi.Outputs, ap *pb.AgentEnvelope_Approval) error {
	if err := v.need(contCell, pendingCell); err != nil {
		return err
	}
	id := ap.GetIntentId()
	ti, ok := v.pending.Get(id)
	if !ok || ti.GetKind() != pb.ToolIntent_APPROVAL || v.cont == nil || !v.cont.IsPending(id) || answeredLate(v.cont, c.now) {
		return fail(records.ReasonApprovalUnknown, nil, "no pending approval %q", id)
	}
	if err := c.checkApproval(ap, ti); err != nil {
		return err
	}
	act, err := c.resumeActivation(v, out, tracing.KindApproval)
	if err != nil {
		return err
	}
	e, err := act.entry(id)
	if err != nil {
		return err
	}
	e.Approval = proto.CloneOf(ap)
	act.tr.emit(pb.TraceEvent_TOOL_CALL, ti.GetStepIndex(), c.now, map[string]string{
		tracing.AttrOperationName: tracing.OpApproval,
		tracing.AttrToolName:      ti.GetToolName(),
		tracing.AttrIntentID:      id,
		tracing.AttrApproved:      strconv.FormatBool(ap.GetApproved()),
	})
	return act.resolve(ti, act.handle)
}

// resolve removes ti from the pending set; when nothing else is pending the suspension ends
// and then runs, else the updated journal is kept in the continuation.
func (act *activation) resolve(ti *pb.ToolIntent, then func() error) error {
	v := act.v
	v.pending.Remove(ti.GetIntentId())
	v.touch(pendingCell)
	v.cont.Resolve(ti.GetIntentId())
	v.touch(contCell)
	if !v.cont.AllResolved() {
		return act.keepWaiting()
	}
	v.cont = nil
	return then()
}

// keepWaiting stores the updated journal in the continuation.
func (act *activation) keepWaiting() error {
	snap, err := act.journalBytes()
	if err != nil {
		return err
	}
	act.v.cont.SetSnapshot(snap)
	act.tr.finish(tracing.StatusSuspended, act.v.cont.StepIndex(), act.c.now)
	return nil
}

// deadline handles the deadline firing: escalate (re-emit the pending intents with the next
// attempt and a later deadline) up to the bound, then fail closed.
func (c *call) deadline(v *view, out *hostapi.Outputs) error {
	if err := v.need(contCell, pendingCell); err != nil {
		return err
	}
	if v.cont == nil || !v.cont.DeadlineDue(c.now) {
		return nil // the key resumed or the deadline moved: a stale firing
	}
	act, err := c.resumeActivation(v, out, tracing.KindTimer)
	if err != nil {
		return err
	}
	if v.cont.WakeAtMs() != 0 {
		return act.wake()
	}
	pending, approval := act.pendingIntents()
	timeout, reason := c.a.limits.ToolTimeoutMs, records.ReasonActivationTimeout
	if approval {
		timeout, reason = c.a.limits.ApprovalTimeoutMs, records.ReasonApprovalTimeout
	}
	signal := v.cont.AwaitingSignal()
	if signal == "" && v.cont.Escalations() < c.a.limits.MaxEscalations {
		return act.escalate(pending, c.now+timeout)
	}
	for _, ti := range pending {
		v.pending.Remove(ti.GetIntentId())
	}
	v.touch(pendingCell)
	timeoutErr := fail(reason, nil, "activation %d still waited for %d intents after %d escalations", act.seq, len(pending), v.cont.Escalations())
	if signal != "" {
		// Await without a deadline is bounded like an approval, and fails closed as one,
		// without escalations: there is no intent to send again.
		reason = records.ReasonApprovalTimeout
		timeoutErr = fail(reason, nil, "activation %d still awaited signal %q at its deadline", act.seq, signal)
	}
	out.DeadLetters = append(out.DeadLetters, deadLetterOf(c.entity, c.now, timeoutErr))
	act.tr.emit(pb.TraceEvent_ERROR, v.cont.StepIndex(), c.now, map[string]string{
		tracing.AttrErrorType: string(reason), tracing.AttrReason: string(reason), tracing.AttrPendingIntents: itoa(int64(len(pending))),
	})
	return act.end(tracing.StatusTimeout)
}

func (act *activation) pendingIntents() (list []*pb.ToolIntent, approval bool) {
	for _, id := range act.v.cont.Pending() {
		if ti, ok := act.v.pending.Get(id); ok {
			list = append(list, ti)
			approval = approval || ti.GetKind() == pb.ToolIntent_APPROVAL
		}
	}
	return list, approval
}

func (act *activation) escalate(pending []*pb.ToolIntent, next int64) error {
	v := act.v
	if err := v.cont.Escalate(next); err != nil {
		return fail(records.ReasonStateCorrupt, err, "escalating")
	}
	v.touch(contCell, pendingCell)
	for _, ti := range pending {
		re := proto.CloneOf(ti)
		re.Attempt++
		re.ExpiresAtMs = next
		if err := act.sign(re); err != nil {
			return err
		}
		v.pending.Remove(ti.GetIntentId())
		if err := v.pending.Add(re); err != nil {
			return fail(records.ReasonStateCorrupt, err, "re-recording intent %s", re.IntentId)
		}
		act.emitIntent(re)
	}
	n := v.cont.Escalations()
	act.tr.emit(pb.TraceEvent_SUSPENDED, v.cont.StepIndex(), act.c.now, map[string]string{
		tracing.AttrPendingIntents: itoa(int64(len(pending))), tracing.AttrDeadline: itoa(next), tracing.AttrEscalations: itoa(int64(n)),
	})
	act.tr.finish(tracing.StatusSuspended, v.cont.StepIndex(), act.c.now)
	return nil
}

// idle handles the idle-key TTL: a key that is not suspended drops its memory and replay
// cache; a suspended key is left to its deadline and checked again later.
func (c *call) idle(v *view) error {
	if err := v.need(contCell); err != nil {
		return err
	}
	if v.cont != nil {
		c.armTTL(c.now)
		return nil
	}
	if err := c.flushOnExpiry(v); err != nil {
		return err
	}
	v.clear(memoryCell)
	v.clear(cacheCell)
	return nil
}
