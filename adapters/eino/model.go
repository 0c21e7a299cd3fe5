package eino

import (
	"context"
	"errors"
	"fmt"

	einomodel "github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// rawArguments is the key, in an Eino tool call's Extra, of the arguments exactly as the model
// sent them: the next request carries them back to the model, as a native handler's does.
const rawArguments = "beamagents.raw_arguments"

// Model is Eino's tool-calling chat model answered by the runtime's model call
// (agent.Context.Chat) of the run bound to the Go context. Its tools are runtime tool
// declarations; WithTools selects among them by name.
type Model struct {
	known map[string]agent.ToolDecl
	bound []agent.ToolDecl
}

var _ einomodel.ToolCallingChatModel = (*Model)(nil)

// NewModel returns a Model that may declare decls to the model (none bound yet).
func NewModel(decls ...agent.ToolDecl) *Model {
	known := make(map[string]agent.ToolDecl, len(decls))
	for _, d := range decls {
		known[d.Name] = d
	}
	return &Model{known: known}
}

// WithTools returns a Model declaring the tools of infos, each of which must name one of the
// Model's runtime declarations (whose closed schema, not the info's, is what the model is
// sent and what admits its calls).
func (m *Model) WithTools(infos []*schema.ToolInfo) (einomodel.ToolCallingChatModel, error) {
	bound := make([]agent.ToolDecl, 0, len(infos))
	for _, info := range infos {
		d, ok := m.known[info.Name]
		if !ok {
			return nil, fmt.Errorf("eino adapter: tool %q has no runtime declaration", info.Name)
		}
		bound = append(bound, d)
	}
	return &Model{known: m.known, bound: bound}, nil
}

// ErrUnsupported matches the failure of a call with an option that would change the request.
var ErrUnsupported = errors.New("eino adapter: unsupported")

// Generate asks the model through Context.Chat. An option that would change the request
// (model, temperature, top p, max tokens, stop words, tools, tool choice) fails the
// activation: the agent's definition fixes the request, the same on every run and in the
// replay-cache key.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, opts ...einomodel.Option) (*schema.Message, error) {
	hc, err := from(ctx)
	if err != nil {
		return nil, err
	}
	if o := einomodel.GetCommonOptions(nil, opts...); o.Temperature != nil || o.MaxTokens != nil || o.Model != nil || o.TopP != nil ||
		o.Stop != nil || o.Tools != nil || o.ToolChoice != nil || o.AllowedToolNames != nil {
		return nil, hc.Fail(records.ReasonInternalPanic, "%v: a model option that changes the request", ErrUnsupported)
	}
	msgs, err := toRuntime(input)
	if err != nil {
		return nil, hc.Fail(records.ReasonInternalPanic, "%v", err)
	}
	turn, err := hc.Chat(agent.Chat{Messages: msgs, Tools: m.bound})
	if err != nil {
		return nil, err
	}
	return fromTurn(turn), nil
}

// Stream answers as one chunk: a request with native tools is answered whole.
func (m *Model) Stream(ctx context.Context, input []*schema.Message, opts ...einomodel.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// fromTurn is an admitted turn as Eino's assistant message: each call's arguments are the
// admitted canonical fields (what the tool receives), the model's own text kept aside.
func fromTurn(turn *agent.Turn) *schema.Message {
	raw := turn.Message().ToolCalls
	msg := &schema.Message{Role: schema.Assistant, Content: turn.Text}
	for i, c := range turn.Calls {
		msg.ToolCalls = append(msg.ToolCalls, schema.ToolCall{
			ID: c.ID, Type: "function",
			Function: schema.FunctionCall{Name: c.Tool, Arguments: c.ArgsJSON},
			Extra:    map[string]any{rawArguments: raw[i].Arguments},
		})
	}
	return msg
}

// toRuntime converts Eino's messages to the runtime's. Only what a provider is sent passes:
// role, text, tool calls (with the model's own arguments where Eino kept them) and the tool
// call a tool message answers; Eino's metadata (response meta, extra) never does.
func toRuntime(in []*schema.Message) ([]model.Message, error) {
	out := make([]model.Message, 0, len(in))
	for i, m := range in {
		if m == nil {
			return nil, fmt.Errorf("eino message %d is nil", i)
		}
		if len(m.MultiContent) > 0 || len(m.UserInputMultiContent) > 0 || len(m.AssistantGenMultiContent) > 0 {
			return nil, fmt.Errorf("eino message %d has multimodal content, which the runtime does not send", i)
		}
		rm := model.Message{Content: m.Content, ToolCallID: m.ToolCallID}
		switch m.Role {
		case schema.System:
			rm.Role = model.RoleSystem
		case schema.User:
			rm.Role = model.RoleUser
		case schema.Assistant:
			rm.Role = model.RoleAssistant
		case schema.Tool:
			rm.Role = model.RoleTool
		default:
			return nil, fmt.Errorf("eino message %d has role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			args := c.Function.Arguments
			if raw, ok := c.Extra[rawArguments].(string); ok {
				args = raw
			}
			rm.ToolCalls = append(rm.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args})
		}
		out = append(out, rm)
	}
	return out, nil
}
