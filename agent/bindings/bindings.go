package bindings

import (
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/bind"
)

// Definition is an agent of bindings: what every agent has (Handler unset) and its prompt and
// bindings.
type Definition struct {
	agent.Definition
	// Prompt builds each step's messages; nil selects DefaultPrompt("").
	Prompt PromptBuilder
	// Bindings map each proposal case's stable id (the root type id, for a record proposal) to
	// its action. Every case must be bound: bindings are explicit, never inferred from names.
	Bindings map[string]Action
	// MaxSteps bounds the steps of one activation (one model proposal each, and the approved
	// call of an approval); default 8. An activation that reaches it dead-letters as
	// budget_exceeded. The bounds every agent has are in Definition.Limits.
	MaxSteps uint32
}

// New validates def and builds its agent: a name, no handler, declared tool names every
// provider can be sent, a schema, a model, every case of the schema bound and every binding
// naming a case, tool names present, remember fields naming string or bytes fields of their
// case, and each case bound to a declared tool negotiated against it. Its errors match
// agent.ErrDefinition.
func New(def Definition) (*agent.Agent, error) {
	return build(def.Definition, def.Prompt, def.Bindings, def.MaxSteps)
}

// Action is what one bound proposal case does. Build it with Final, Tool, Approval or
// Remember.
type Action = bind.Action

// ActionKind says what an admitted proposal case does.
type ActionKind = bind.ActionKind

// Action kinds.
const (
	ActFinal    = bind.ActFinal    // a final reply carrying the admitted document
	ActTool     = bind.ActTool     // a TOOL intent with the case's fields as arguments; suspends
	ActApproval = bind.ActApproval // an APPROVAL intent, then the gated TOOL intent if approved
	ActRemember = bind.ActRemember // one memory entry from two of the case's fields; continues
)

// Final binds a case to the final reply.
func Final() Action { return Action{Kind: ActFinal} }

// Tool binds a case to a call of the named tool: the case's fields are its arguments, and
// the activation suspends until its result arrives.
func Tool(name string) Action { return Action{Kind: ActTool, Tool: name} }

// Approval binds a case to a human approval of a call of the named tool: the activation
// suspends until a person decides, then emits the gated call (approved) or resumes with the
// rejection (rejected).
func Approval(tool string) Action { return Action{Kind: ActApproval, Tool: tool} }

// Remember binds a case to a memory write of the two named fields (a string key, a string or
// bytes value); the activation continues with its next step.
func Remember(keyField, valueField string) Action {
	return Action{Kind: ActRemember, KeyField: keyField, ValueField: valueField}
}
