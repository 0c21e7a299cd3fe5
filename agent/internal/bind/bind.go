// Package bind is the one seam between package agent's activation core and the kinds of
// agent it runs, and the vocabulary of a bindings agent. Kind is what the core asks of an
// agent's kind instead of branching on it: the suspension's adapter and journal codec, when
// the state cells are read, whether signals may be awaited, which tools the intents call,
// and how the agent is rebuilt with another model; package agent implements it for handler
// agents, package agent/bindings for bindings agents. Run is what a bindings step needs of
// the running activation beyond agent.Context's public operations, and Build and RunOf are
// the hooks, set by package agent, through which agent/bindings builds its agents and reaches
// a run. The vocabulary (the actions a proposal case is bound to, what a prompt builder
// sees, the default prompt) is agent/bindings' public API, which aliases it. Nothing here
// runs an activation.
package bind

import (
	"fmt"

	"github.com/beamagents/beamagents/model"
)

// ActionKind says what an admitted proposal case does.
type ActionKind int

// Action kinds.
const (
	// ActFinal ends the activation with a final reply carrying the admitted document.
	ActFinal ActionKind = iota + 1
	// ActTool emits a TOOL intent with the case's fields as arguments and suspends until its
	// result arrives.
	ActTool
	// ActApproval emits an APPROVAL intent for a gated tool, suspends until a human decides,
	// then emits the gated TOOL intent (approved) or resumes with the rejection (rejected).
	ActApproval
	// ActRemember writes one memory entry from two of the case's fields and continues with
	// the next step.
	ActRemember
)

func (k ActionKind) String() string {
	switch k {
	case ActFinal:
		return "final"
	case ActTool:
		return "tool"
	case ActApproval:
		return "approval"
	case ActRemember:
		return "remember"
	}
	return fmt.Sprintf("action(%d)", int(k))
}

// Action is what one bound proposal case does.
type Action struct {
	Kind ActionKind
	// Tool is the tool a TOOL intent calls, or the tool an APPROVAL intent gates.
	Tool string
	// KeyField and ValueField are the stable ids of the case fields a remember action writes
	// as memory key (a string field) and value (a string or bytes field).
	KeyField, ValueField string
}

// PromptInput is what a prompt builder sees for one step.
type PromptInput struct {
	EntityKey []byte
	Seq       int64
	Step      uint32
	// Trigger is the external event that started the activation (opaque bytes).
	Trigger []byte
	// Memory is the key's working memory, least recently used first.
	Memory []MemoryItem
	// Steps are the completed steps of this activation: the admitted proposals and the tool
	// results or approval decisions that answered them.
	Steps []StepView
}

// MemoryItem is one memory entry.
type MemoryItem struct {
	Key   string
	Value []byte
}

// StepView is one completed step as a prompt builder sees it.
type StepView struct {
	Step     uint32
	CaseID   string
	Proposal string // the admitted canonical proposal document ("" for a gated tool step)
	Tool     string // the tool called or gated, if any
	// Outcome of the step's intent: "ok", "error", "expired", "rejected" (tool statuses),
	// "approved" or "denied" (approvals), or "" when the step emitted no intent.
	Outcome string
	Payload []byte // tool result payload
	Message string // tool error message, or the approver
	Note    string // the approver's note on the decision, if any
}

// PromptBuilder turns a step's input into the model's messages. It must be deterministic: the
// messages are part of the replay-cache key.
type PromptBuilder func(in *PromptInput) []model.Message
