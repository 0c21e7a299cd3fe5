package agent

import (
	"strings"

	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// promptInput is what the prompt builder sees for a bindings agent's step: the journal's
// steps so far (one position each) and the key's memory as it is now.
func (act *activation) promptInput(step uint32) *bind.PromptInput {
	in := &bind.PromptInput{
		EntityKey: act.c.entity,
		Seq:       act.seq,
		Step:      step,
		Trigger:   act.journal.GetTrigger().GetExternalEvent(),
	}
	for k, val := range act.v.memory.All() {
		in.Memory = append(in.Memory, bind.MemoryItem{Key: k, Value: val})
	}
	for i, e := range act.journal.GetEntries() {
		in.Steps = append(in.Steps, act.stepView(uint32(i), e))
	}
	return in
}

// stepView shows a bindings step: its entry's subject is the step's case.
func (act *activation) stepView(step uint32, e *pb.JournalEntry) bind.StepView {
	sv := bind.StepView{Step: step, CaseID: e.GetName(), Tool: act.c.a.spec.Bindings[e.GetName()].Tool}
	if e.GetOp() == pb.JournalEntry_PROPOSE {
		sv.Proposal = string(e.GetResult())
	}
	switch {
	case e.GetToolResult() != nil:
		sv.Outcome = strings.ToLower(strings.TrimPrefix(e.GetToolResult().GetStatus().String(), "STATUS_"))
		sv.Payload = e.GetToolResult().GetPayload()
		sv.Message = e.GetToolResult().GetErrorMessage()
	case e.GetApproval() != nil:
		sv.Outcome = "denied"
		if e.GetApproval().GetApproved() {
			sv.Outcome = "approved"
		}
		sv.Message, sv.Note = e.GetApproval().GetApprover(), e.GetApproval().GetNote()
	}
	return sv
}
