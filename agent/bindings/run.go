package bindings

import (
	"fmt"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/records"
)

// run is a bindings agent as a handler: step after step, each one position of the journal,
// the model answers the prompt builder's messages, the proposal schema admits the answer and
// the binding of its case acts (final reply, memory write, tool or approval intent). A
// journaled step already acted: the run passes it, making only the gated call of an
// approved step, once.
func (k *kind) run(hc *agent.Context, tr agent.Trigger) error {
	r := bind.RunOf(hc)
	for {
		e, replayed, err := r.Next(pb.JournalEntry_PROPOSE)
		switch {
		case err != nil:
			return err
		case replayed && e.GetApproval().GetApproved():
			if err := k.gate(r, e); err != nil {
				return err
			}
			continue
		case replayed:
			continue
		}
		val, e, err := k.step(r, tr)
		if err != nil {
			return err
		}
		action := k.bindings[bindingOf(val)]
		switch action.Kind {
		case ActFinal:
			return hc.ReplyValue(val, k.schema)
		case ActRemember:
			if err := remember(r, val, action); err != nil {
				return err
			}
		case ActTool:
			return k.bound(r, e, val, action.Tool, pb.ToolIntent_TOOL)
		case ActApproval:
			return k.bound(r, e, val, action.Tool, pb.ToolIntent_APPROVAL)
		default:
			return failure(records.ReasonInternalPanic, nil, "case %s has no action", bindingOf(val))
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

// step asks the model for the proposal of a new step at the next position and journals it.
// The memory and the cache are read first, then the step budget is checked.
func (k *kind) step(r bind.Run, tr agent.Trigger) (*interaction.Value, *pb.JournalEntry, error) {
	memory, err := r.Memory()
	if err != nil {
		return nil, nil, err
	}
	step := uint32(len(r.Entries())) // a new step is at the journal's end
	if step >= k.maxSteps {
		return nil, nil, failure(records.ReasonBudgetExceeded, nil, "activation reached its %d-step budget", k.maxSteps)
	}
	val, err := r.Propose(k.prompt(k.promptInput(r, tr, step, memory)))
	if err != nil {
		return nil, nil, err
	}
	e := &pb.JournalEntry{Op: pb.JournalEntry_PROPOSE, Name: val.CaseID(), Result: []byte(val.CanonicalString())}
	r.Append(e)
	return val, e, nil
}

// bound emits the intent of step e's binding (the case's fields as the tool's arguments) and
// suspends.
func (k *kind) bound(r bind.Run, e *pb.JournalEntry, val *interaction.Value, tool string, kind pb.ToolIntent_Kind) error {
	args, receipt, err := k.toolArgs(bindingOf(val), val)
	if err != nil {
		return err
	}
	return r.Intent(e, tool, args, kind, receipt)
}

// gate makes the gated call of approved step e at the next position: its TOOL intent with the
// arguments the approval was asked for, or, journaled, nothing.
func (k *kind) gate(r bind.Run, e *pb.JournalEntry) error {
	if _, replayed, err := r.Next(pb.JournalEntry_TOOL); err != nil || replayed {
		return err
	}
	caseID, tool := e.GetName(), k.bindings[e.GetName()].Tool
	step := uint32(len(r.Entries())) // the call is at the journal's end
	if step >= k.maxSteps {
		return failure(records.ReasonBudgetExceeded, nil, "no step left for the approved call of %s", tool)
	}
	// The step's proposal is admitted again to render the same arguments as its approval's.
	val, err := r.Admit(e.GetResult())
	if err != nil {
		return failure(records.ReasonStateCorrupt, err, "journaled proposal of step %d", step-1)
	}
	args, _, err := k.toolArgs(caseID, val)
	if err != nil {
		return err
	}
	call := &pb.JournalEntry{Op: pb.JournalEntry_TOOL, Name: caseID}
	r.Append(call)
	return r.Intent(call, tool, args, pb.ToolIntent_TOOL, nil)
}

// remember writes the memory entry of a remember binding: two of the case's fields.
func remember(r bind.Run, val *interaction.Value, action Action) error {
	k, _ := val.Lookup(action.KeyField)
	fv, _ := val.Lookup(action.ValueField)
	value := []byte(fv.Text())
	if fv.Representation() == interaction.Bytes {
		value = fv.Bytes()
	}
	return r.Put(k.Text(), value)
}

// toolArgs renders the case's fields as the intent's canonical arguments; a case bound to a
// declared tool crosses the negotiated boundary first, with its conformance receipt.
func (k *kind) toolArgs(caseID string, val *interaction.Value) (string, map[string]string, error) {
	b, ok := k.boundaries[caseID]
	if !ok {
		return string(val.FieldsJSON()), nil, nil
	}
	out, err := b.Convey(val)
	if err != nil {
		return "", nil, failure(records.ReasonProposalRefused, err, "arguments for the tool of %s", caseID)
	}
	return string(out.Value.FieldsJSON()), out.Receipt.Attributes(), nil
}

// failure is the typed error the activation fails with: its dead letter's reason.
func failure(r records.Reason, err error, format string, args ...any) error {
	return &agent.Error{Reason: r, Detail: fmt.Sprintf(format, args...), Err: err}
}
