package agent

import (
	"maps"
	"slices"

	"github.com/beamagents/beamagents/agent/internal/bind"
	"github.com/beamagents/beamagents/interaction"
)

// ToolShape is the shape in which an agent's intents carry a tool's arguments (args_json):
// the FieldsJSON of a value of Schema, of the case CaseID when the schema is the proposal
// itself (a tool without a declaration receives its case's fields), or of the root record of
// the tool's declared argument schema (CaseID "").
type ToolShape struct {
	Tool   string
	Schema *interaction.Schema
	CaseID string
}

// ToolShapes lists, sorted by tool name, the argument shape of every tool the agent's
// bindings call or gate. An executor negotiates each against its own implementation's schema.
// A tool bound by several cases without a declaration has one shape per case; the first case
// in stable-id order is listed.
func (a *Agent) ToolShapes() []ToolShape {
	byTool := map[string]ToolShape{}
	if a.spec == nil {
		// A handler's tools are the declared ones: it calls them in code.
		for name, spec := range a.def.Tools {
			if spec.Args != nil {
				byTool[name] = ToolShape{Tool: name, Schema: spec.Args}
			}
		}
	}
	var bindings map[string]bind.Action
	if a.spec != nil {
		bindings = a.spec.Bindings
	}
	for _, caseID := range slices.Sorted(maps.Keys(bindings)) {
		act := bindings[caseID]
		if act.Kind != bind.ActTool && act.Kind != bind.ActApproval {
			continue
		}
		if _, seen := byTool[act.Tool]; seen {
			continue
		}
		if spec, ok := a.def.Tools[act.Tool]; ok && spec.Args != nil {
			byTool[act.Tool] = ToolShape{Tool: act.Tool, Schema: spec.Args}
			continue
		}
		byTool[act.Tool] = ToolShape{Tool: act.Tool, Schema: a.def.Schema, CaseID: caseID}
	}
	out := make([]ToolShape, 0, len(byTool))
	for _, name := range slices.Sorted(maps.Keys(byTool)) {
		out = append(out, byTool[name])
	}
	return out
}
