package langchaingo

import (
	"context"

	"github.com/tmc/langchaingo/tools"

	"github.com/beamagents/beamagents/agent"
)

// Tool is a langchaingo tools.Tool answered by the runtime (see New) as a native handler's
// RunTools answers a call (agent.Context.RunCalls): inline when the declaration has an inline
// function, else a signed intent, behind an approval first when its NeedsApproval asks.
type Tool struct {
	decl agent.ToolDecl
}

var _ tools.Tool = (*Tool)(nil)

// Name is the tool's name.
func (t *Tool) Name() string { return t.decl.Name }

// Description is the tool's description.
func (t *Tool) Description() string { return t.decl.Description }

// Call runs the tool on input, the call's arguments as a JSON object, admitted again by the
// tool's schema (agent.Context.AdmitCall: a framework, or code around it, cannot hand a tool
// arguments the schema refuses). A call that suspends returns agent.ErrSuspended, which the
// framework's loop passes up. The observation is the call's tool message.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	hc, err := from(ctx)
	if err != nil {
		return "", err
	}
	call, err := hc.AdmitCall(t.decl, "", input)
	if err != nil {
		return "", err
	}
	msgs, err := hc.RunCalls([]agent.ToolDecl{t.decl}, call)
	if err != nil {
		return "", err
	}
	return msgs[0].Content, nil
}
