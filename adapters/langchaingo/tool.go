package langchaingo

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/tmc/langchaingo/tools"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
)

// ToolSpec declares a tool: its name, description and closed argument schema, and its
// inline function when it is an inline read-only tool (agent.ToolDecl). Approval gates a
// side-effecting tool behind a human approval; Denied is what the framework observes of a
// denied call.
type ToolSpec struct {
	agent.ToolDecl
	Approval bool
	Denied   string
}

// Tool is a langchaingo tools.Tool run by the runtime (see Bind).
type Tool struct {
	hc   *agent.Context
	spec ToolSpec
}

var _ tools.Tool = (*Tool)(nil)

// Name is the tool's name.
func (t *Tool) Name() string { return t.spec.Name }

// Description is the tool's description.
func (t *Tool) Description() string { return t.spec.Description }

// Call runs the tool on input, the call's arguments as a JSON object: admitted by the tool's
// schema, then run inline, or emitted as an intent (the activation suspends: Call returns
// agent.ErrSuspended, which the framework's loop passes up). The observation is the inline
// output (or "error: " and its failure), the tool result's payload (or its status and error
// message), or Denied.
func (t *Tool) Call(_ context.Context, input string) (string, error) {
	args, err := t.admit(input)
	if err != nil {
		return "", err
	}
	hc := t.hc
	switch {
	case t.spec.Inline != nil:
		out, err := hc.Inline(t.spec.Name, []byte(args), t.spec.Inline)
		var ie *agent.InlineError
		if errors.As(err, &ie) {
			return "error: " + ie.Message, nil
		}
		return string(out), err
	case t.spec.Approval:
		res, approved, err := hc.Approved(t.spec.Name, args)
		if err != nil {
			return "", err
		}
		if !approved {
			return t.spec.Denied, nil
		}
		return content(res), nil
	}
	res, err := hc.Tool(t.spec.Name, args)
	if err != nil {
		return "", err
	}
	return content(res), nil
}

// admit admits input strictly by the tool's schema and returns its canonical fields: a
// framework, or code around it, cannot hand a tool arguments the schema refuses.
func (t *Tool) admit(input string) (string, error) {
	adm, err := admitterOf(t.spec.Args)
	if err != nil {
		return "", t.hc.Fail(records.ReasonInternalPanic, "arguments of tool %s: %v", t.spec.Name, err)
	}
	out, err := adm.Admit(slices.Concat([]byte(`{"fields":`), []byte(input), []byte(`}`)))
	if err != nil {
		return "", t.hc.Fail(records.ReasonProposalRefused, "arguments of tool %s: %v", t.spec.Name, err)
	}
	return string(out.Value.FieldsJSON()), nil
}

// admitters holds each argument schema's admission, built once.
var admitters sync.Map // *interaction.Schema → *negotiate.Admitter

func admitterOf(s *interaction.Schema) (*negotiate.Admitter, error) {
	if a, ok := admitters.Load(s); ok {
		return a.(*negotiate.Admitter), nil
	}
	a, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		return nil, err
	}
	got, _ := admitters.LoadOrStore(s, a)
	return got.(*negotiate.Admitter), nil
}

// content renders a tool result for the model, as agent.Context.RunTools does.
func content(r *pb.ToolResult) string {
	if r.GetStatus() == pb.ToolResult_OK {
		return string(r.GetPayload())
	}
	return r.GetStatus().String() + ": " + r.GetErrorMessage()
}
