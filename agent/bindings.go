package agent

import (
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/records"
)

// bindingsAdapter is the Continuation.adapter of a suspended bindings agent; its snapshot is
// a binary AgentResume, the journal's bindings form (journalOfResume, resumeOfJournal).
const bindingsAdapter = "beamagents.agent.v1"

// runBindings is a bindings agent as a handler: step after step, each one position of the
// journal, the model answers the prompt builder's messages, the proposal schema admits the
// answer and the binding of its case acts (final reply, memory write, tool or approval
// intent). A journaled step already acted: the run passes it, making only the gated call of
// an approved step, once.
func (a *Agent) runBindings(hc *Context, _ Trigger) error {
	for {
		e, replayed, err := hc.journaled(pb.JournalEntry_PROPOSE)
		switch {
		case err != nil:
			return err
		case replayed && e.GetApproval().GetApproved():
			if err := hc.gate(e); err != nil {
				return err
			}
			continue
		case replayed:
			continue
		}
		val, e, err := hc.step()
		if err != nil {
			return err
		}
		action := a.spec.Bindings[bindingOf(val)]
		switch action.Kind {
		case bind.ActFinal:
			return hc.ReplyValue(val, a.def.Schema)
		case bind.ActRemember:
			if err := hc.remember(val, action); err != nil {
				return err
			}
		case bind.ActTool:
			return hc.bound(e, val, action.Tool, pb.ToolIntent_TOOL, a.limits.ToolTimeoutMs)
		case bind.ActApproval:
			return hc.bound(e, val, action.Tool, pb.ToolIntent_APPROVAL, a.limits.ApprovalTimeoutMs)
		default:
			return hc.fails(fail(records.ReasonInternalPanic, nil, "case %s has no action", bindingOf(val)))
		}
	}
}

// bindingOf is the id a proposal's binding is found by: its case, or its root type for a
// record proposal.
func bindingOf(val *interaction.Value) string {
	if id := val.CaseID(); id != "" {
		return id
	}
	return val.TypeID()
}

// journaled takes the next position when the journal holds it, which must be a bindings step
// of kind op; it reports whether it did.
func (hc *Context) journaled(op pb.JournalEntry_Op) (*pb.JournalEntry, bool, error) {
	if err := hc.usable(); err != nil {
		return nil, false, err
	}
	if hc.pos >= len(hc.j.Entries) {
		return nil, false, nil
	}
	e := hc.j.Entries[hc.pos]
	if e.GetOp() != op {
		return nil, false, hc.fails(fail(records.ReasonStateCorrupt, nil, "step %d of the journal is %s, not %s", hc.pos, e.GetOp(), op))
	}
	hc.pos++
	return e, true, nil
}

// step asks the model for the proposal of a new step at the next position and journals it.
func (hc *Context) step() (*interaction.Value, *pb.JournalEntry, error) {
	act := hc.act
	if err := act.v.need(memoryCell, cacheCell); err != nil {
		return nil, nil, hc.fails(err)
	}
	step := uint32(hc.pos)
	if max := act.c.a.spec.MaxSteps; step >= max {
		return nil, nil, hc.fails(fail(records.ReasonBudgetExceeded, nil, "activation reached its %d-step budget", max))
	}
	val, err := act.propose(step)
	if err != nil {
		return nil, nil, hc.fails(err)
	}
	e := &pb.JournalEntry{Op: pb.JournalEntry_PROPOSE, Name: val.CaseID(), Result: []byte(val.CanonicalString())}
	hc.j.Entries = append(hc.j.Entries, e)
	hc.pos++
	return val, e, nil
}

// bound emits the intent of step e's binding (the case's fields as the tool's arguments) and
// suspends.
func (hc *Context) bound(e *pb.JournalEntry, val *interaction.Value, tool string, kind pb.ToolIntent_Kind, timeoutMs int64) error {
	act := hc.act
	args, receipt, err := act.toolArgs(bindingOf(val), val)
	if err != nil {
		return hc.fails(err)
	}
	ti, err := act.newIntent(hc.lastPos(), tool, args, kind, timeoutMs)
	if err != nil {
		return hc.fails(err)
	}
	e.IntentId, act.receipt = ti.IntentId, receipt
	hc.fresh = []*pb.ToolIntent{ti}
	return ErrSuspended
}

// gate makes the gated call of approved step e at the next position: its TOOL intent with the
// arguments the approval was asked for, or, journaled, nothing.
func (hc *Context) gate(e *pb.JournalEntry) error {
	if _, replayed, err := hc.journaled(pb.JournalEntry_TOOL); err != nil || replayed {
		return err
	}
	act := hc.act
	a := act.c.a
	caseID, tool := e.GetName(), a.spec.Bindings[e.GetName()].Tool
	step := uint32(hc.pos)
	if step >= a.spec.MaxSteps {
		return hc.fails(fail(records.ReasonBudgetExceeded, nil, "no step left for the approved call of %s", tool))
	}
	// The step's proposal is admitted again to render the same arguments as its approval's.
	out, err := a.use.admitter.Admit(e.GetResult())
	if err != nil {
		return hc.fails(fail(records.ReasonStateCorrupt, err, "journaled proposal of step %d", step-1))
	}
	args, _, err := act.toolArgs(caseID, out.Value)
	if err != nil {
		return hc.fails(err)
	}
	ti, err := act.newIntent(step, tool, args, pb.ToolIntent_TOOL, a.limits.ToolTimeoutMs)
	if err != nil {
		return hc.fails(err)
	}
	hc.j.Entries = append(hc.j.Entries, &pb.JournalEntry{Op: pb.JournalEntry_TOOL, Name: caseID, IntentId: ti.IntentId})
	hc.pos++
	hc.fresh = []*pb.ToolIntent{ti}
	return ErrSuspended
}

// remember writes the memory entry of a remember binding: two of the case's fields.
func (hc *Context) remember(val *interaction.Value, action bind.Action) error {
	k, _ := val.Lookup(action.KeyField)
	fv, _ := val.Lookup(action.ValueField)
	value := []byte(fv.Text())
	if fv.Representation() == interaction.Bytes {
		value = fv.Bytes()
	}
	return hc.put(k.Text(), value)
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
		return "", nil, fail(records.ReasonProposalRefused, err, "arguments for the tool of %s", caseID)
	}
	return string(out.Value.FieldsJSON()), out.Receipt.Attributes(), nil
}

// journalOfResume reads the AgentResume of a bindings suspension as its journal: step record
// i is position i, a PROPOSE entry (its proposal as result) or, for the gated call of an
// approved step (a record without a proposal), a TOOL entry; the entry's subject is the
// record's case, and its intent, result and approval are the record's. Nothing is lost:
// resumeOfJournal gives the same record back.
func journalOfResume(snapshot []byte) (*pb.HandlerJournal, error) {
	r := &pb.AgentResume{}
	if err := proto.Unmarshal(snapshot, r); err != nil {
		return nil, fail(records.ReasonStateCorrupt, err, "continuation snapshot")
	}
	j := &pb.HandlerJournal{Trigger: r.GetTrigger(), TraceId: r.GetTraceId(), ModelCalls: r.GetModelCalls(), Tokens: r.GetTokens()}
	j.Entries = make([]*pb.JournalEntry, len(r.GetSteps()))
	for i, rec := range r.GetSteps() {
		if rec.GetStepIndex() != uint32(i) {
			return nil, fail(records.ReasonStateCorrupt, nil, "continuation snapshot: record %d is of step %d", i, rec.GetStepIndex())
		}
		e := &pb.JournalEntry{Op: pb.JournalEntry_PROPOSE, Name: rec.GetCaseId(), Result: []byte(rec.GetProposal()),
			IntentId: rec.GetIntentId(), ToolResult: rec.GetResult(), Approval: rec.GetApproval()}
		if rec.GetProposal() == "" {
			e.Op, e.Result = pb.JournalEntry_TOOL, nil
		}
		j.Entries[i] = e
	}
	return j, nil
}

// resumeOfJournal encodes a bindings journal as its AgentResume.
func resumeOfJournal(j *pb.HandlerJournal) ([]byte, error) {
	r := &pb.AgentResume{Trigger: j.GetTrigger(), TraceId: j.GetTraceId(), ModelCalls: j.GetModelCalls(), Tokens: j.GetTokens()}
	r.Steps = make([]*pb.StepRecord, len(j.GetEntries()))
	for i, e := range j.GetEntries() {
		r.Steps[i] = &pb.StepRecord{StepIndex: uint32(i), CaseId: e.GetName(), Proposal: string(e.GetResult()),
			IntentId: e.GetIntentId(), Result: e.GetToolResult(), Approval: e.GetApproval()}
	}
	snap, err := proto.MarshalOptions{Deterministic: true}.Marshal(r)
	if err != nil {
		return nil, fail(records.ReasonStateCorrupt, err, "encoding resume state")
	}
	return snap, nil
}
