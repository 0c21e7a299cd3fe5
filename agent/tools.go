package agent

import (
	"maps"
	"slices"

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

// ToolShapes lists, sorted by tool name, the argument shape of every tool the agent's intents
// call or gate: a handler's declared tools, a bindings agent's bound ones. An executor
// negotiates each against its own implementation's schema. A tool bound by several cases
// without a declaration has one shape per case; the first case in stable-id order is listed.
func (a *Agent) ToolShapes() []ToolShape {
	byTool := map[string]ToolShape{}
	for _, t := range a.kind.Tools() {
		if _, seen := byTool[t.Name]; seen {
			continue
		}
		switch spec, ok := a.def.Tools[t.Name]; {
		case ok && spec.Args != nil:
			byTool[t.Name] = ToolShape{Tool: t.Name, Schema: spec.Args}
		case t.CaseID != "":
			byTool[t.Name] = ToolShape{Tool: t.Name, Schema: a.def.Schema, CaseID: t.CaseID}
		}
	}
	out := make([]ToolShape, 0, len(byTool))
	for _, name := range slices.Sorted(maps.Keys(byTool)) {
		out = append(out, byTool[name])
	}
	return out
}
