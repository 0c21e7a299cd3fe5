package effector

import (
	"encoding/json"
	"fmt"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/negotiate"
)

// Binding is a tool with the shape its intents' arguments arrive in. A zero Producer means
// the arguments are already in the tool's own schema.
type Binding struct {
	Tool tool.Tool
	// Producer is the schema args_json is the FieldsJSON of (the agent's proposal or its
	// declaration of the tool; agent.ToolShape), and CaseID the proposal case when Producer is
	// a variant.
	Producer *interaction.Schema
	CaseID   string
}

// bound is a binding negotiated once, when the effector is built.
type bound struct {
	Binding
	boundary *negotiate.Boundary // nil when the producer is the tool's schema
}

func bind(b Binding) (*bound, error) {
	name := b.Tool.Name()
	if err := tool.CheckArgs(name, b.Tool.Args()); err != nil {
		return nil, err
	}
	out := &bound{Binding: b}
	if b.Producer == nil || b.Producer.Digest() == b.Tool.Args().Digest() {
		out.Producer, out.CaseID = b.Tool.Args(), ""
		return out, nil
	}
	var err error
	if b.Producer.Root().Kind() == interaction.Variant {
		out.boundary, err = negotiate.CheckBinding(b.Producer, b.CaseID, b.Tool.Args(), tool.AgreementOf(b.Tool))
	} else {
		out.CaseID = ""
		out.boundary, err = negotiate.Negotiate(b.Producer, b.Tool.Args(), tool.AgreementOf(b.Tool))
	}
	if err != nil {
		return nil, &Error{Code: CodeConfig, Detail: fmt.Sprintf("tool %s: its arguments do not negotiate with the producer's %s", name, b.Producer.RootTypeID()), Err: err}
	}
	return out, nil
}

// present decodes args_json strictly as the producer's canonical value, carries it across
// the negotiated boundary and renders it in the tool's shape.
func (b *bound) present(args string) (json.RawMessage, error) {
	doc := make([]byte, 0, len(args)+256)
	doc = append(doc, `{"schema":`...)
	doc = canonjson.AppendString(doc, interaction.ValueFormat)
	doc = append(doc, `,"root_type_id":`...)
	doc = canonjson.AppendString(doc, b.Producer.RootTypeID())
	doc = append(doc, `,"schema_digest":`...)
	doc = canonjson.AppendString(doc, b.Producer.Digest())
	doc = append(doc, `,"value":{`...)
	if b.CaseID != "" {
		doc = append(doc, `"case":`...)
		doc = canonjson.AppendString(doc, b.CaseID)
		doc = append(doc, ',')
	}
	doc = append(doc, `"fields":`...)
	doc = append(doc, args...)
	doc = append(doc, "}}\n"...)
	v, err := b.Producer.Decode(doc)
	if err != nil {
		return nil, err
	}
	if b.boundary != nil {
		out, err := b.boundary.Convey(v)
		if err != nil {
			return nil, err
		}
		v = out.Value
	}
	return tool.Present(v), nil
}

// AgentBindings binds the tools registered for each named agent (tool.RegisterAgentTools)
// to the argument shapes of the agent's intents. The agents are built with an empty
// configuration.
func AgentBindings(names ...string) ([]Binding, error) {
	var out []Binding
	for _, name := range names {
		tools, ok, err := tool.ForAgent(name)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Detail: "tools of agent " + name, Err: err}
		}
		if !ok {
			continue
		}
		a, err := agent.Build(name, nil)
		if err != nil {
			return nil, &Error{Code: CodeConfig, Detail: "building agent " + name + " for its tool shapes", Err: err}
		}
		shapes := map[string]agent.ToolShape{}
		for _, s := range a.ToolShapes() {
			shapes[s.Tool] = s
		}
		for _, t := range tools {
			b := Binding{Tool: t}
			if s, ok := shapes[t.Name()]; ok {
				b.Producer, b.CaseID = s.Schema, s.CaseID
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// present returns ti's arguments in its tool's own shape, or its args_json as it is when the
// tool is unknown or cannot present them.
func (e *Effector) present(ti *pb.ToolIntent) string {
	if b, ok := e.tools[ti.GetToolName()]; ok {
		if shown, err := b.present(ti.GetArgsJson()); err == nil {
			return string(shown)
		}
	}
	return ti.GetArgsJson()
}
