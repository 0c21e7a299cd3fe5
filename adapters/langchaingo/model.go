package langchaingo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/model"
)

// ErrUnsupported matches the errors of what the adapter does not carry to the runtime: a
// per-call option that would change the request, a message part it cannot send.
var ErrUnsupported = errors.New("langchaingo adapter: unsupported")

// ErrUnbound is returned by the Model or a Tool called outside a handler run (a Go context
// without the run's agent.Context: agent.FromContext).
var ErrUnbound = errors.New("langchaingo adapter: called outside a handler run (no agent.Context in the Go context)")

// Model is a langchaingo llms.Model answered by the runtime's model call, Context.Chat, of
// the handler run its Go context carries.
type Model struct {
	tools map[string]*Tool
}

var _ llms.Model = (*Model)(nil)

// New returns a langchaingo model and the decls as langchaingo tools, answered by the handler
// run whose agent.Context their Go context carries (agent.Context.Context); they may be built
// once. The model may be asked to call only these tools.
func New(decls ...agent.ToolDecl) (*Model, []*Tool) {
	m := &Model{tools: map[string]*Tool{}}
	out := make([]*Tool, len(decls))
	for i, d := range decls {
		out[i] = &Tool{decl: d}
		m.tools[d.Name] = out[i]
	}
	return m, out
}

func from(ctx context.Context) (*agent.Context, error) {
	if hc, ok := agent.FromContext(ctx); ok {
		return hc, nil
	}
	return nil, ErrUnbound
}

// GenerateContent asks the model through Context.Chat with the tools the options declare.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	hc, err := from(ctx)
	if err != nil {
		return nil, err
	}
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	if err := checkOptions(&o); err != nil {
		return nil, err
	}
	decls, err := m.declared(&o)
	if err != nil {
		return nil, err
	}
	msgs, err := toMessages(messages)
	if err != nil {
		return nil, err
	}
	turn, err := hc.Chat(agent.Chat{Messages: msgs, Tools: decls})
	if err != nil {
		return nil, err
	}
	choice := &llms.ContentChoice{Content: turn.Text, StopReason: "stop"}
	for _, c := range turn.Calls {
		choice.ToolCalls = append(choice.ToolCalls, llms.ToolCall{ID: c.ID, Type: "function",
			FunctionCall: &llms.FunctionCall{Name: c.Tool, Arguments: c.ArgsJSON}})
	}
	if len(choice.ToolCalls) > 0 {
		choice.StopReason = "tool_calls"
		choice.FuncCall = choice.ToolCalls[0].FunctionCall
	}
	if o.StreamingFunc != nil && turn.Text != "" {
		if err := o.StreamingFunc(ctx, []byte(turn.Text)); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// Call answers a single prompt (llms.GenerateFromSinglePrompt).
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// declared returns the declarations of the tools the options name (Tools, then Functions),
// each once, in the order named; a name that is not a bound tool is refused.
func (m *Model) declared(o *llms.CallOptions) ([]agent.ToolDecl, error) {
	var names []string
	for _, t := range o.Tools {
		if t.Function == nil {
			return nil, fmt.Errorf("%w: a tool of type %q without a function", ErrUnsupported, t.Type)
		}
		names = append(names, t.Function.Name)
	}
	for _, f := range o.Functions {
		names = append(names, f.Name)
	}
	var decls []agent.ToolDecl
	seen := map[string]bool{}
	for _, n := range names {
		t, ok := m.tools[n]
		if !ok {
			return nil, fmt.Errorf("%w: the tool %q is not bound (New declares the tools the model may call)", ErrUnsupported, n)
		}
		if !seen[n] {
			seen[n] = true
			decls = append(decls, t.decl)
		}
	}
	return decls, nil
}

// checkOptions refuses the per-call options that would change the request.
func checkOptions(o *llms.CallOptions) error {
	var set []string
	for name, on := range map[string]bool{
		"Model": o.Model != "", "CandidateCount": o.CandidateCount > 1, "N": o.N > 1, "MaxTokens": o.MaxTokens != 0,
		"Temperature": o.Temperature != 0, "TopK": o.TopK != 0, "TopP": o.TopP != 0, "Seed": o.Seed != 0,
		"MinLength": o.MinLength != 0, "MaxLength": o.MaxLength != 0, "RepetitionPenalty": o.RepetitionPenalty != 0,
		"FrequencyPenalty": o.FrequencyPenalty != 0, "PresencePenalty": o.PresencePenalty != 0, "StopWords": len(o.StopWords) > 0,
		"JSONMode": o.JSONMode, "ResponseMIMEType": o.ResponseMIMEType != "", "FunctionCallBehavior": o.FunctionCallBehavior != "",
		"ToolChoice": o.ToolChoice != nil && o.ToolChoice != "auto",
	} {
		if on {
			set = append(set, name)
		}
	}
	if len(set) > 0 {
		slices.Sort(set)
		return fmt.Errorf("%w: call options %s (the request is the agent definition's)", ErrUnsupported, strings.Join(set, ", "))
	}
	return nil
}

// toMessages converts langchaingo messages: system, human (and generic) as user, ai with its
// tool calls as assistant, and each tool response as a tool message.
func toMessages(in []llms.MessageContent) ([]model.Message, error) {
	var out []model.Message
	for i, mc := range in {
		var texts []string
		var calls []model.ToolCall
		var answers []model.Message
		for _, part := range mc.Parts {
			switch p := part.(type) {
			case llms.TextContent:
				texts = append(texts, p.Text)
			case llms.ToolCall:
				if p.FunctionCall == nil {
					return nil, fmt.Errorf("%w: message %d has a tool call without a function", ErrUnsupported, i)
				}
				calls = append(calls, model.ToolCall{ID: p.ID, Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Arguments})
			case llms.ToolCallResponse:
				answers = append(answers, agent.ToolMessage(p.ToolCallID, p.Content))
			default:
				return nil, fmt.Errorf("%w: message %d has a %T part", ErrUnsupported, i, part)
			}
		}
		text := strings.Join(texts, "\n")
		switch mc.Role {
		case llms.ChatMessageTypeSystem:
			out = append(out, model.Message{Role: model.RoleSystem, Content: text})
		case llms.ChatMessageTypeHuman, llms.ChatMessageTypeGeneric:
			out = append(out, model.Message{Role: model.RoleUser, Content: text})
		case llms.ChatMessageTypeAI:
			out = append(out, model.Message{Role: model.RoleAssistant, Content: text, ToolCalls: calls})
		case llms.ChatMessageTypeTool:
			if len(answers) == 0 || len(texts) > 0 {
				return nil, fmt.Errorf("%w: tool message %d must hold tool call responses only", ErrUnsupported, i)
			}
			out = append(out, answers...)
			continue
		default:
			return nil, fmt.Errorf("%w: message %d has role %q", ErrUnsupported, i, mc.Role)
		}
		if len(answers) > 0 || (len(calls) > 0 && mc.Role != llms.ChatMessageTypeAI) {
			return nil, fmt.Errorf("%w: message %d (%s) mixes tool parts into its role", ErrUnsupported, i, mc.Role)
		}
	}
	return out, nil
}
