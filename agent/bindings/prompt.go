package bindings

import (
	"strings"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// PromptBuilder turns a step's input into the model's messages. It must be deterministic: the
// messages are part of the replay-cache key.
type PromptBuilder = bind.PromptBuilder

// PromptInput is what a prompt builder sees for one step: the key, its activation and step,
// the triggering event, the key's memory and the activation's completed steps.
type PromptInput = bind.PromptInput

// MemoryItem is one memory entry.
type MemoryItem = bind.MemoryItem

// StepView is one completed step as a prompt builder sees it.
type StepView = bind.StepView

// DefaultSystemPrompt is the system message of DefaultPrompt("").
const DefaultSystemPrompt = bind.DefaultSystemPrompt

// DefaultPrompt returns a prompt builder: the system message, the memory as a second system
// message, the triggering event as the user message, then for each completed step the
// proposal (assistant) and its outcome (tool). Bytes that are not UTF-8 are shown in base64.
func DefaultPrompt(system string) PromptBuilder { return bind.DefaultPrompt(system) }

// promptInput is what the prompt builder sees for a step: the key, its activation and step,
// the triggering event, the key's memory as it is now and the journal's steps so far (one
// position each).
func (k *kind) promptInput(r bind.Run, tr agent.Trigger, step uint32, memory []MemoryItem) *PromptInput {
	in := &PromptInput{EntityKey: tr.EntityKey, Seq: tr.Seq, Step: step, Trigger: tr.Event, Memory: memory}
	for i, e := range r.Entries() {
		in.Steps = append(in.Steps, k.stepView(uint32(i), e))
	}
	return in
}

// stepView shows a step: its entry's subject is the step's case.
func (k *kind) stepView(step uint32, e *pb.JournalEntry) StepView {
	sv := StepView{Step: step, CaseID: e.GetName(), Tool: k.bindings[e.GetName()].Tool}
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
