package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/model/provider"
)

// Model calls a Chat Completions API. It is safe for concurrent use.
type Model struct {
	cfg    provider.Config
	client oai.Client

	mu       sync.Mutex
	profiles map[string]*provider.Profile // by schema digest
}

// New returns a Model for cfg, reading its API key now (on the worker).
func New(cfg provider.Config) (*Model, error) {
	cfg = cfg.Resolved()
	key, err := provider.LoadKey(cfg.APIKey)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{option.WithMaxRetries(0)}
	if key != "" {
		opts = append(opts, option.WithAPIKey(key))
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	opts = append(opts, option.WithHTTPClient(cfg.Client()))
	return &Model{cfg: cfg, client: oai.NewClient(opts...), profiles: map[string]*provider.Profile{}}, nil
}

// Profile returns the strict schema profile sent for req's schema (cached by digest).
func (m *Model) Profile(req *model.Request) (*provider.Profile, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.profiles[req.SchemaDigest]; ok {
		return p, nil
	}
	p, err := provider.NewProfile(provider.OpenAIStrict, req.ResponseSchema)
	if err != nil {
		return nil, err
	}
	m.profiles[req.SchemaDigest] = p
	return p, nil
}

// params are the request's parameters, and the mapping of its declared tool names to the
// names they are sent under (provider.ToolNames): the answer's calls are mapped back with it.
func (m *Model) params(req *model.Request) (oai.ChatCompletionNewParams, *provider.ToolNames, error) {
	names, err := provider.RequestToolNames(req)
	if err != nil {
		return oai.ChatCompletionNewParams{}, nil, err
	}
	name := req.Model
	if name == "" {
		name = m.cfg.Model
	}
	params := oai.ChatCompletionNewParams{
		Model:    shared.ChatModel(name),
		Messages: messages(req.Messages, names),
	}
	// A request without a response schema (a conversation, with or without native tools) is
	// answered in free text and tool calls.
	if len(req.ResponseSchema) > 0 {
		p, err := m.Profile(req)
		if err != nil {
			return oai.ChatCompletionNewParams{}, nil, provider.Typed(model.CodeProvider, "schema profile", err)
		}
		params.ResponseFormat = oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: p.Name, Strict: oai.Bool(true), Schema: p.Schema},
		}}
	}
	for _, t := range req.Tools {
		tool, err := functionTool(t, names.Wire(t.Name))
		if err != nil {
			return oai.ChatCompletionNewParams{}, nil, provider.Typed(model.CodeProvider, "tool "+t.Name, err)
		}
		params.Tools = append(params.Tools, tool)
	}
	s := req.Sampling
	if s.Temperature != nil {
		params.Temperature = oai.Float(*s.Temperature)
	}
	if s.TopP != nil {
		params.TopP = oai.Float(*s.TopP)
	}
	if s.Seed != nil {
		params.Seed = oai.Int(*s.Seed)
	}
	if s.MaxOutputTokens > 0 {
		params.MaxCompletionTokens = oai.Int(s.MaxOutputTokens)
	}
	return params, names, nil
}

// functionTool declares t as a strict function tool named wire: its parameters are the
// OpenAI-strict profile of its argument schema's fields.
func functionTool(t model.Tool, wire string) (oai.ChatCompletionToolUnionParam, error) {
	raw, err := provider.ToolParameters(provider.OpenAIStrict, t.Parameters)
	if err != nil {
		return oai.ChatCompletionToolUnionParam{}, err
	}
	var params shared.FunctionParameters // bounds keep their exact digits
	if err := jsontext.Decode(string(raw), &params, jsontext.DecodeOptions{UseNumber: true}); err != nil {
		return oai.ChatCompletionToolUnionParam{}, err
	}
	rawNumbers(params)
	fn := shared.FunctionDefinitionParam{Name: wire, Strict: oai.Bool(true), Parameters: params}
	if t.Description != "" {
		fn.Description = oai.String(t.Description)
	}
	return oai.ChatCompletionFunctionTool(fn), nil
}

// rawNumbers turns the numbers of decoded parameters into raw JSON: the SDK's encoder writes a
// json.Number, a string type, as a JSON string, but keeps a json.Marshaler's bytes, so a bound
// such as 18446744073709551615 is sent as the number it is.
func rawNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		return json.RawMessage(v)
	case map[string]any:
		for k, e := range v {
			v[k] = rawNumbers(e)
		}
	case shared.FunctionParameters:
		for k, e := range v {
			v[k] = rawNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = rawNumbers(e)
		}
	}
	return v
}

// messages are the conversation in the API's shape; the tool calls of assistant turns carry
// their tools' wire names, as the model answered them.
func messages(ms []model.Message, names *provider.ToolNames) []oai.ChatCompletionMessageParamUnion {
	out := make([]oai.ChatCompletionMessageParamUnion, 0, len(ms))
	for _, m := range ms {
		switch {
		case m.Role == model.RoleAssistant && len(m.ToolCalls) > 0:
			am := oai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				am.Content.OfString = oai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				am.ToolCalls = append(am.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID, Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: names.Wire(c.Name), Arguments: c.Arguments},
				}})
			}
			out = append(out, oai.ChatCompletionMessageParamUnion{OfAssistant: &am})
		case m.Role == model.RoleTool && m.ToolCallID != "":
			out = append(out, oai.ToolMessage(m.Content, m.ToolCallID))
		case m.Role == model.RoleSystem:
			out = append(out, oai.SystemMessage(m.Content))
		case m.Role == model.RoleAssistant:
			out = append(out, oai.AssistantMessage(m.Content))
		default: // user, and tool results the prompt renders as text
			out = append(out, oai.UserMessage(m.Content))
		}
	}
	return out
}

// Generate makes a non-streaming call.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	params, names, err := m.params(req)
	if err != nil {
		return nil, err
	}
	resp, _, err := provider.Call(ctx, m.cfg, limit.Estimate(req), func(actx context.Context) (*model.Response, error) {
		c, err := m.client.Chat.Completions.New(actx, params)
		if err != nil {
			return nil, err
		}
		return completion(c, names)
	}, judge)
	return resp, err
}

// completion reads a whole answer; its tool calls name their tools as declared (names).
func completion(c *oai.ChatCompletion, names *provider.ToolNames) (*model.Response, error) {
	if len(c.Choices) == 0 {
		return nil, provider.Typed(model.CodeMalformed, "the completion has no choices", nil)
	}
	ch := c.Choices[0]
	if ch.Message.Refusal != "" {
		return nil, provider.Typed(model.CodeRefusal, "the model refused", nil)
	}
	var calls []model.ToolCall
	for _, c := range ch.Message.ToolCalls {
		// The arguments stay the text the model sent: the runtime's decoder reads every
		// integer's digits, never a float64.
		calls = append(calls, model.ToolCall{ID: c.ID, Name: names.Declared(c.Function.Name), Arguments: c.Function.Arguments})
	}
	if ch.Message.Content == "" && len(calls) == 0 {
		return nil, provider.Typed(model.CodeRefusal, "the answer has no content (finish reason "+ch.FinishReason+")", nil)
	}
	return &model.Response{
		ToolCalls:    calls,
		Text:         []byte(ch.Message.Content),
		Usage:        usage(c.Usage),
		Model:        c.Model,
		FinishReason: ch.FinishReason,
	}, nil
}

// usage reads a completion's token usage: prompt_tokens already counts the prompt-cache reads
// that prompt_tokens_details.cached_tokens reports.
func usage(u oai.CompletionUsage) model.Usage {
	return model.Usage{InputTokens: u.PromptTokens, CachedInputTokens: u.PromptTokensDetails.CachedTokens, OutputTokens: u.CompletionTokens}
}

// Stream makes a streaming call (or, with Config.NoStream, a plain one delivered as one
// chunk). onChunk sees each content delta; its error cancels the request.
func (m *Model) Stream(ctx context.Context, req *model.Request, onChunk func([]byte) error) (*model.Response, error) {
	// Tool calls stream through StreamTools; free text (no response schema) is not a document
	// to admit as it forms.
	if m.cfg.NoStream || len(req.Tools) > 0 || len(req.ResponseSchema) == 0 {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			return nil, err
		}
		if err := onChunk(resp.Text); err != nil {
			return nil, provider.Cancelled(err)
		}
		return resp, nil
	}
	return m.stream(ctx, req, onChunk, nil)
}

// StreamTools makes a streaming call with native tools (or, with Config.NoStream, a plain one
// whose calls are delivered one delta each). onDelta sees each tool_calls[].function.arguments
// delta; its error cancels the request.
func (m *Model) StreamTools(ctx context.Context, req *model.Request, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	if m.cfg.NoStream {
		return provider.DeliverWhole(ctx, req, m.Generate, onDelta)
	}
	return m.stream(ctx, req, func([]byte) error { return nil }, onDelta)
}

// stream makes a streaming call with its attempts: onChunk sees each content delta, onDelta
// (for a request with native tools) each tool-call arguments delta.
func (m *Model) stream(ctx context.Context, req *model.Request, onChunk func([]byte) error, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	params, names, err := m.params(req)
	if err != nil {
		return nil, err
	}
	params.StreamOptions.IncludeUsage = oai.Bool(true)
	resp, _, err := provider.Call(ctx, m.cfg, limit.Estimate(req), func(actx context.Context) (*model.Response, error) {
		return m.streamOnce(actx, params, names, onChunk, onDelta)
	}, judge)
	return resp, err
}

// streamOnce reads one streamed answer: onChunk sees each content delta, onDelta (for a
// request with native tools) each tool-call arguments delta.
func (m *Model) streamOnce(ctx context.Context, params oai.ChatCompletionNewParams, names *provider.ToolNames, onChunk func([]byte) error, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := m.client.Chat.Completions.NewStreaming(ctx, params)
	defer st.Close()
	var text strings.Builder
	calls := streamedCalls{names: names}
	resp := &model.Response{}
	for st.Next() {
		ch := st.Current()
		if ch.Model != "" {
			resp.Model = ch.Model
		}
		if ch.JSON.Usage.Valid() {
			resp.Usage = usage(ch.Usage)
		}
		if len(ch.Choices) == 0 {
			continue
		}
		c := ch.Choices[0]
		if c.FinishReason != "" {
			resp.FinishReason = c.FinishReason
		}
		if c.Delta.Refusal != "" {
			return nil, provider.Typed(model.CodeRefusal, "the model refused", nil)
		}
		for _, d := range c.Delta.ToolCalls {
			if err := calls.add(d); err != nil {
				return nil, err
			}
			delta := calls.delta(d)
			if onDelta == nil || len(delta.Arguments) == 0 {
				continue
			}
			if err := onDelta(delta); err != nil {
				cancel() // closes the connection before the rest is read
				return nil, provider.Cancelled(err)
			}
		}
		if c.Delta.Content == "" {
			continue
		}
		text.WriteString(c.Delta.Content)
		if err := onChunk([]byte(c.Delta.Content)); err != nil {
			cancel() // closes the connection before the rest is read
			return nil, provider.Cancelled(err)
		}
	}
	if err := st.Err(); err != nil {
		return nil, provider.StreamBroke(ctx, judge, err, text.Len() > 0 || len(calls.calls) > 0)
	}
	if text.Len() == 0 && len(calls.calls) == 0 {
		return nil, provider.Typed(model.CodeRefusal, "the answer has no content (finish reason "+resp.FinishReason+")", nil)
	}
	resp.Text = []byte(text.String())
	resp.ToolCalls = calls.done()
	return resp, nil
}

// streamedCalls accumulates the tool calls of a streamed answer by index: the first delta of
// a call names its id and function (mapped back to the declared name at once, so every delta
// handed on names the tool as declared), the following ones continue its arguments.
type streamedCalls struct {
	names *provider.ToolNames
	calls []*model.ToolCall
}

func (s *streamedCalls) add(d oai.ChatCompletionChunkChoiceDeltaToolCall) error {
	i := int(d.Index)
	switch {
	case i == len(s.calls):
		s.calls = append(s.calls, &model.ToolCall{ID: d.ID, Name: s.names.Declared(d.Function.Name)})
	case i < 0 || i > len(s.calls):
		return provider.Typed(model.CodeMalformed, fmt.Sprintf("tool call delta of index %d after %d calls", i, len(s.calls)), nil)
	}
	c := s.calls[i]
	c.Arguments += d.Function.Arguments
	return nil
}

// delta is d as the call's ToolDelta (the call's id and name as its first delta named them).
func (s *streamedCalls) delta(d oai.ChatCompletionChunkChoiceDeltaToolCall) model.ToolDelta {
	c := s.calls[d.Index]
	return model.ToolDelta{Index: int(d.Index), ID: c.ID, Name: c.Name, Arguments: []byte(d.Function.Arguments)}
}

func (s *streamedCalls) done() []model.ToolCall {
	var out []model.ToolCall
	for _, c := range s.calls {
		out = append(out, *c)
	}
	return out
}

// judge classifies an attempt's error: the SDK's API error carries the HTTP status and
// response.
var judge = provider.JudgeSDK(func(e *oai.Error) (int, *http.Response) { return e.StatusCode, e.Response })
