package eino

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
)

// Tool is an Eino invokable tool answered by the runtime: an inline read-only tool
// (decl.Inline set) through agent.Context.Inline, a side-effecting one through
// agent.Context.Tool (a signed intent; the activation suspends until its result), a gated one
// through agent.Context.Approved when its Gate says the call needs an approval.
type Tool struct {
	decl agent.ToolDecl
	gate *Gate
	info *schema.ToolInfo
	adm  *negotiate.Admitter
}

var _ tool.InvokableTool = (*Tool)(nil)

// Gate puts a side-effecting tool behind a human approval: an APPROVAL intent, then, once
// approved, the TOOL intent (agent.Context.Approved).
type Gate struct {
	// Needed decides in code whether a call needs the approval (for example only above a
	// threshold), from the run's Context (its trigger) and the call's canonical arguments; it
	// must be deterministic. Nil gates every call.
	Needed func(hc *agent.Context, argsJSON string) bool
	// Denied is the tool message that answers the model when the call was not approved;
	// empty means Rejected.
	Denied string
}

// Rejected is the default tool message of a call whose approval was denied.
const Rejected = "REJECTED: the call was not approved"

// NewTool returns the Eino tool of decl.
func NewTool(decl agent.ToolDecl) (*Tool, error) { return newTool(decl, nil) }

// NewGatedTool returns the Eino tool of decl behind gate; decl must not be inline.
func NewGatedTool(decl agent.ToolDecl, gate Gate) (*Tool, error) {
	if decl.Inline != nil {
		return nil, fmt.Errorf("eino adapter: tool %s is inline; only a side-effecting tool is gated", decl.Name)
	}
	if gate.Denied == "" {
		gate.Denied = Rejected
	}
	return newTool(decl, &gate)
}

func newTool(decl agent.ToolDecl, gate *Gate) (*Tool, error) {
	if decl.Name == "" || decl.Args == nil {
		return nil, fmt.Errorf("eino adapter: a tool needs a name and an argument schema")
	}
	params, err := provider.ToolParameters(provider.OpenAIStrict, decl.Args.ProviderJSONSchema())
	if err != nil {
		return nil, fmt.Errorf("eino adapter: tool %s: %w", decl.Name, err)
	}
	js := &jsonschema.Schema{}
	if err := json.Unmarshal(params, js); err != nil {
		return nil, fmt.Errorf("eino adapter: tool %s: parameters as Eino's JSON Schema: %w", decl.Name, err)
	}
	adm, err := negotiate.NewAdmitter(decl.Args, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		return nil, fmt.Errorf("eino adapter: tool %s: %w", decl.Name, err)
	}
	info := &schema.ToolInfo{Name: decl.Name, Desc: decl.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(js)}
	return &Tool{decl: decl, gate: gate, info: info, adm: adm}, nil
}

// Decl returns the tool's runtime declaration (for NewModel).
func (t *Tool) Decl() agent.ToolDecl { return t.decl }

// Info returns the tool's Eino description (informational: the model is sent the runtime's
// declaration).
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun runs the call with the arguments Eino passes, which must be the admitted
// canonical arguments the Model handed Eino: arguments changed on the way (a rewriting
// middleware) are admitted again, strictly, and refused unless canonical.
func (t *Tool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	hc, err := from(ctx)
	if err != nil {
		return "", err
	}
	out, err := t.adm.Admit(slices.Concat([]byte(`{"fields":`), []byte(args), []byte(`}`)))
	if err != nil || string(out.Value.FieldsJSON()) != args {
		return "", hc.Fail(records.ReasonProposalRefused, "arguments of %s reached the tool unadmitted: %v", t.decl.Name, err)
	}
	switch {
	case t.decl.Inline != nil:
		res, err := hc.Inline(t.decl.Name, []byte(args), t.decl.Inline)
		if ie, ok := err.(*agent.InlineError); ok {
			return "error: " + ie.Message, nil
		}
		return string(res), err
	case t.gate != nil && (t.gate.Needed == nil || t.gate.Needed(hc, args)):
		res, approved, err := hc.Approved(t.decl.Name, args)
		if err != nil {
			return "", err
		}
		if !approved {
			return t.gate.Denied, nil
		}
		return content(res), nil
	}
	res, err := hc.Tool(t.decl.Name, args)
	if err != nil {
		return "", err
	}
	return content(res), nil
}

// content renders a tool result for the model as a native handler's RunTools does: its
// payload when OK, else its status and error message.
func content(r *pb.ToolResult) string {
	if r.GetStatus() == pb.ToolResult_OK {
		return string(r.GetPayload())
	}
	return r.GetStatus().String() + ": " + r.GetErrorMessage()
}

// ToolsConfig is Eino's tools-node configuration for tools: calls run one at a time, in the
// model's order (an agent.Context is not safe for concurrent use, and the journal's positions
// follow the order), and a call of an unknown tool is never answered by Eino (the Model's
// admission has refused it already).
func ToolsConfig(tools ...*Tool) compose.ToolsNodeConfig {
	base := make([]tool.BaseTool, len(tools))
	for i, t := range tools {
		base[i] = t
	}
	return compose.ToolsNodeConfig{Tools: base, ExecuteSequentially: true}
}

// Decls returns the runtime declarations of tools, for NewModel.
func Decls(tools ...*Tool) []agent.ToolDecl {
	out := make([]agent.ToolDecl, len(tools))
	for i, t := range tools {
		out[i] = t.decl
	}
	return out
}
