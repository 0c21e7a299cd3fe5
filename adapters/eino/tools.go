package eino

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

// Tool is an Eino invokable tool answered by the runtime as a native handler's RunTools
// answers a call (agent.Context.RunCalls): an inline read-only tool (decl.Inline set) runs
// inline, a side-effecting one is a signed intent (the activation suspends until its result),
// behind an approval first when decl.NeedsApproval asks for one.
type Tool struct {
	decl agent.ToolDecl
	info *schema.ToolInfo
}

var _ tool.InvokableTool = (*Tool)(nil)

// NewTool returns the Eino tool of decl.
func NewTool(decl agent.ToolDecl) (*Tool, error) {
	if decl.Name == "" || decl.Args == nil {
		return nil, fmt.Errorf("eino adapter: a tool needs a name and an argument schema")
	}
	params, err := provider.ToolParameters(provider.OpenAIStrict, decl.Args.ModelJSONSchema())
	if err != nil {
		return nil, fmt.Errorf("eino adapter: tool %s: %w", decl.Name, err)
	}
	js := &jsonschema.Schema{}
	if err := json.Unmarshal(params, js); err != nil {
		return nil, fmt.Errorf("eino adapter: tool %s: parameters as Eino's JSON Schema: %w", decl.Name, err)
	}
	info := &schema.ToolInfo{Name: decl.Name, Desc: decl.Description, ParamsOneOf: schema.NewParamsOneOfByJSONSchema(js)}
	return &Tool{decl: decl, info: info}, nil
}

// Decl returns the tool's runtime declaration (for NewModel).
func (t *Tool) Decl() agent.ToolDecl { return t.decl }

// Info returns the tool's Eino description (informational: the model is sent the runtime's
// declaration).
func (t *Tool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// InvokableRun runs the call with the arguments Eino passes, which must be the admitted
// canonical arguments the Model handed Eino: arguments changed on the way (a rewriting
// middleware) are admitted again (agent.Context.AdmitCall), and refused unless canonical.
func (t *Tool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	hc, err := from(ctx)
	if err != nil {
		return "", err
	}
	call, err := hc.AdmitCall(t.decl, compose.GetToolCallID(ctx), args)
	if err != nil {
		return "", err
	}
	if call.ArgsJSON != args {
		return "", hc.Fail(records.ReasonProposalRefused, "arguments of %s reached the tool not canonical", t.decl.Name)
	}
	msgs, err := hc.RunCalls([]agent.ToolDecl{t.decl}, call)
	if err != nil {
		return "", err
	}
	return msgs[0].Content, nil
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
