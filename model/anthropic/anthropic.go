package anthropic

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/model/provider"
)

// Model calls the Messages API. It is safe for concurrent use.
type Model struct {
	cfg    provider.Config
	client ant.Client

	mu    sync.Mutex
	tools map[string]*tool // by schema digest
}

type tool struct {
	profile *provider.Profile
	param   ant.ToolUnionParam
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
	} else {
		opts = append(opts, option.WithoutEnvironmentDefaults())
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	opts = append(opts, option.WithHTTPClient(cfg.Client()))
	return &Model{cfg: cfg, client: ant.NewClient(opts...), tools: map[string]*tool{}}, nil
}

// Profile returns the tool schema profile sent for req's schema (cached by digest).
func (m *Model) Profile(req *model.Request) (*provider.Profile, error) {
	t, err := m.tool(req)
	if err != nil {
		return nil, err
	}
	return t.profile, nil
}

func (m *Model) tool(req *model.Request) (*tool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tools[req.SchemaDigest]; ok {
		return t, nil
	}
	p, err := provider.NewProfile(provider.AnthropicTool, req.ResponseSchema)
	if err != nil {
		return nil, err
	}
	root, err := readRoot(p.Schema)
	if err != nil {
		return nil, err
	}
	t := &tool{profile: p, param: ant.ToolUnionParam{OfTool: &ant.ToolParam{
		Name:        p.Name,
		Description: ant.String("Propose the next action. Call this tool exactly once; its input is the proposal."),
		InputSchema: ant.ToolInputSchemaParam{
			Properties:  root.Properties,
			Required:    root.Required,
			ExtraFields: map[string]any{"additionalProperties": false, "$defs": root.Defs},
		},
	}}}
	m.tools[req.SchemaDigest] = t
	return t, nil
}

// schemaRoot is what a tool's input schema takes from a profile's projection.
type schemaRoot struct {
	Properties json.RawMessage `json:"properties"`
	Required   []string        `json:"required"`
	Defs       json.RawMessage `json:"$defs"`
}

func readRoot(projection []byte) (schemaRoot, error) {
	var root schemaRoot
	err := jsontext.Decode(string(projection), &root, jsontext.DecodeOptions{})
	return root, err
}

// toolParam declares a native tool named wire: its input schema is the Anthropic profile of
// its argument schema's fields.
func toolParam(t model.Tool, wire string) (ant.ToolUnionParam, error) {
	raw, err := provider.ToolParameters(provider.AnthropicTool, t.Parameters)
	if err != nil {
		return ant.ToolUnionParam{}, err
	}
	root, err := readRoot(raw)
	if err != nil {
		return ant.ToolUnionParam{}, err
	}
	extra := map[string]any{"additionalProperties": false}
	if len(root.Defs) > 0 {
		extra["$defs"] = root.Defs
	}
	tp := &ant.ToolParam{Name: wire, InputSchema: ant.ToolInputSchemaParam{Properties: root.Properties, Required: root.Required, ExtraFields: extra}}
	if t.Description != "" {
		tp.Description = ant.String(t.Description)
	}
	return ant.ToolUnionParam{OfTool: tp}, nil
}

// request is what a call sends: its parameters, the forced proposal tool (nil for a request
// with native tools), and the mapping of the declared tool names to the names they are sent
// under (provider.ToolNames), with which the answer's calls are mapped back.
type request struct {
	params ant.MessageNewParams
	tool   *tool
	names  *provider.ToolNames
}

func (m *Model) params(req *model.Request) (request, error) {
	names, err := provider.RequestToolNames(req)
	if err != nil {
		return request{}, err
	}
	// Without a response schema (a conversation, with or without native tools) the model
	// answers in text and tool calls; with one, it is forced to call the proposal tool.
	if len(req.ResponseSchema) == 0 {
		return m.toolsParams(req, names)
	}
	t, err := m.tool(req)
	if err != nil {
		return request{}, provider.Typed(model.CodeProvider, "schema profile", err)
	}
	params := m.baseParams(req, names)
	params.Tools = []ant.ToolUnionParam{t.param}
	params.ToolChoice = ant.ToolChoiceParamOfTool(t.profile.Name)
	return request{params: params, tool: t, names: names}, nil
}

// toolsParams are the parameters of a request with native tools: the model chooses whether
// to answer in text or call tools.
func (m *Model) toolsParams(req *model.Request, names *provider.ToolNames) (request, error) {
	params := m.baseParams(req, names)
	for _, t := range req.Tools {
		tp, err := toolParam(t, names.Wire(t.Name))
		if err != nil {
			return request{}, provider.Typed(model.CodeProvider, "tool "+t.Name, err)
		}
		params.Tools = append(params.Tools, tp)
	}
	return request{params: params, names: names}, nil
}

// baseParams are the model, the output bound and the messages. The API wants user and
// assistant turns alternating: consecutive messages of one role (the tool results of a turn
// with several calls, a user message after them) travel as one message of several content
// blocks, in order, so a tool turn's results come first in the user message that answers it.
// The tool_use blocks of assistant turns carry their tools' wire names, as the model answered.
func (m *Model) baseParams(req *model.Request, names *provider.ToolNames) ant.MessageNewParams {
	name := req.Model
	if name == "" {
		name = m.cfg.Model
	}
	maxTokens := req.Sampling.MaxOutputTokens
	if maxTokens <= 0 {
		maxTokens = provider.DefaultMaxTokens
	}
	params := ant.MessageNewParams{Model: ant.Model(name), MaxTokens: maxTokens}
	type turn struct {
		user   bool
		blocks []ant.ContentBlockParamUnion
	}
	var turns []turn
	add := func(user bool, blocks ...ant.ContentBlockParamUnion) {
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for _, msg := range req.Messages {
		switch {
		case msg.Role == model.RoleTool && msg.ToolCallID != "":
			add(true, ant.NewToolResultBlock(msg.ToolCallID, msg.Content, false))
		case msg.Role == model.RoleSystem:
			params.System = append(params.System, ant.TextBlockParam{Text: msg.Content})
		case msg.Role == model.RoleAssistant && len(msg.ToolCalls) > 0:
			var blocks []ant.ContentBlockParamUnion
			if msg.Content != "" {
				blocks = append(blocks, ant.NewTextBlock(msg.Content))
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, ant.NewToolUseBlock(c.ID, json.RawMessage(c.Arguments), names.Wire(c.Name)))
			}
			add(false, blocks...)
		case msg.Role == model.RoleAssistant:
			add(false, ant.NewTextBlock(msg.Content))
		default:
			add(true, ant.NewTextBlock(msg.Content))
		}
	}
	for _, t := range turns {
		if t.user {
			params.Messages = append(params.Messages, ant.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, ant.NewAssistantMessage(t.blocks...))
		}
	}
	// This API version takes no temperature or top_p: only the output bound is sent.
	return params
}

// Generate makes a non-streaming call.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r, err := m.params(req)
	if err != nil {
		return nil, err
	}
	resp, _, err := provider.Call(ctx, m.cfg, limit.Estimate(req), func(actx context.Context) (*model.Response, error) {
		msg, err := m.client.Messages.New(actx, r.params)
		if err != nil {
			return nil, err
		}
		if r.tool == nil {
			return toolsAnswer(msg, r.names)
		}
		return answer(msg, r.tool.profile.Name)
	}, judge)
	return resp, err
}

func answer(msg *ant.Message, toolName string) (*model.Response, error) {
	if msg.StopReason == ant.StopReasonRefusal {
		return nil, provider.Typed(model.CodeRefusal, "the model refused", nil)
	}
	for _, b := range msg.Content {
		if b.Type == "tool_use" && b.Name == toolName && len(b.Input) > 0 {
			return &model.Response{
				Text:         []byte(b.Input),
				Usage:        usage(msg.Usage),
				Model:        msg.Model,
				FinishReason: string(msg.StopReason),
			}, nil
		}
	}
	return nil, provider.Typed(model.CodeRefusal, "the answer has no call of the proposal tool (stop reason "+string(msg.StopReason)+")", nil)
}

// toolsAnswer reads an answer to a request with native tools: its text blocks and its
// tool_use blocks, whose input is kept as the exact JSON the API sent and whose names are
// mapped back to the declared ones (names).
func toolsAnswer(msg *ant.Message, names *provider.ToolNames) (*model.Response, error) {
	if msg.StopReason == ant.StopReasonRefusal {
		return nil, provider.Typed(model.CodeRefusal, "the model refused", nil)
	}
	resp := &model.Response{
		Usage:        usage(msg.Usage),
		Model:        msg.Model,
		FinishReason: string(msg.StopReason),
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			resp.Text = append(resp.Text, b.Text...)
		case "tool_use":
			resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{ID: b.ID, Name: names.Declared(b.Name), Arguments: string(b.Input)})
		}
	}
	if len(resp.Text) == 0 && len(resp.ToolCalls) == 0 {
		return nil, provider.Typed(model.CodeRefusal, "the answer has no text and no tool call (stop reason "+string(msg.StopReason)+")", nil)
	}
	return resp, nil
}

// Stream makes a streaming call (or, with Config.NoStream, a plain one delivered as one
// chunk). onChunk sees each input_json_delta; its error cancels the request.
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
	r, err := m.params(req)
	if err != nil {
		return nil, err
	}
	resp, _, err := provider.Call(ctx, m.cfg, limit.Estimate(req), func(actx context.Context) (*model.Response, error) {
		return m.streamOnce(actx, r.params, r.tool.profile.Name, onChunk)
	}, judge)
	return resp, err
}

// StreamTools makes a streaming call with native tools (or, with Config.NoStream, a plain one
// whose calls are delivered one delta each). onDelta sees each input_json_delta of each
// tool_use block; its error cancels the request.
func (m *Model) StreamTools(ctx context.Context, req *model.Request, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	if m.cfg.NoStream {
		return provider.DeliverWhole(ctx, req, m.Generate, onDelta)
	}
	r, err := m.params(req)
	if err != nil {
		return nil, err
	}
	resp, _, err := provider.Call(ctx, m.cfg, limit.Estimate(req), func(actx context.Context) (*model.Response, error) {
		return m.streamToolsOnce(actx, r.params, r.names, onDelta)
	}, judge)
	return resp, err
}

// streamToolsOnce reads one streamed answer with native tools: its text blocks and its
// tool_use blocks, whose input is the concatenation of their input_json_delta pieces (the
// block's start input when it had none), as toolsAnswer reads a whole answer: each block's
// name is mapped back to the declared one before its first delta is handed on.
func (m *Model) streamToolsOnce(ctx context.Context, params ant.MessageNewParams, names *provider.ToolNames, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := m.client.Messages.NewStreaming(ctx, params)
	defer st.Close()
	resp := &model.Response{}
	var tokens counts
	type block struct {
		call  int // the block's call index, or -1 for a text block
		start string
		got   bool
	}
	blocks := map[int64]*block{}
	seen := false
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "message_start", "message_delta":
			noteMessage(resp, &tokens, ev)
		case "content_block_start":
			b := &block{call: -1}
			if ev.ContentBlock.Type == "tool_use" {
				b.call, b.start = len(resp.ToolCalls), ev.ContentBlock.JSON.Input.Raw()
				resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{ID: ev.ContentBlock.ID, Name: names.Declared(ev.ContentBlock.Name)})
			}
			blocks[ev.Index] = b
		case "content_block_delta":
			b := blocks[ev.Index]
			switch {
			case b == nil:
				return nil, provider.Typed(model.CodeMalformed, fmt.Sprintf("content_block_delta of block %d before its start", ev.Index), nil)
			case ev.Delta.Type == "text_delta" && b.call < 0:
				resp.Text = append(resp.Text, ev.Delta.Text...)
				seen = seen || ev.Delta.Text != ""
			case ev.Delta.Type == "input_json_delta" && b.call >= 0 && ev.Delta.PartialJSON != "":
				c := &resp.ToolCalls[b.call]
				c.Arguments += ev.Delta.PartialJSON
				b.got, seen = true, true
				if err := onDelta(model.ToolDelta{Index: b.call, ID: c.ID, Name: c.Name, Arguments: []byte(ev.Delta.PartialJSON)}); err != nil {
					cancel() // closes the connection before the rest is read
					return nil, provider.Cancelled(err)
				}
			}
		case "content_block_stop":
			if b := blocks[ev.Index]; b != nil && b.call >= 0 {
				resp.ToolCalls[b.call].Arguments = streamedInput(b.start, resp.ToolCalls[b.call].Arguments, b.got)
			}
		}
	}
	if err := st.Err(); err != nil {
		return nil, provider.StreamBroke(ctx, judge, err, seen)
	}
	switch {
	case resp.FinishReason == string(ant.StopReasonRefusal):
		return nil, provider.Typed(model.CodeRefusal, "the model refused", nil)
	case len(resp.Text) == 0 && len(resp.ToolCalls) == 0:
		return nil, provider.Typed(model.CodeRefusal, "the answer has no text and no tool call (stop reason "+resp.FinishReason+")", nil)
	}
	return resp, nil
}

// noteMessage records what a message_start or message_delta event says of the answer: its
// model, stop reason and token usage (c keeps the API's counts between the two).
func noteMessage(resp *model.Response, c *counts, ev ant.MessageStreamEventUnion) {
	if ev.Type == "message_start" {
		resp.Model = ev.Message.Model
		u := ev.Message.Usage
		*c = counts{input: u.InputTokens, cacheRead: u.CacheReadInputTokens, cacheWrite: u.CacheCreationInputTokens}
	} else {
		resp.FinishReason = string(ev.Delta.StopReason)
		// message_delta's counts are cumulative: each one it gives replaces message_start's.
		u := ev.Usage
		c.input, c.cacheRead, c.cacheWrite = cmp.Or(u.InputTokens, c.input), cmp.Or(u.CacheReadInputTokens, c.cacheRead), cmp.Or(u.CacheCreationInputTokens, c.cacheWrite)
		c.output = u.OutputTokens
	}
	resp.Usage = c.usage()
}

// counts are an answer's token counts as the Messages API reports them: its input_tokens
// leaves out the prompt tokens read from the prompt cache (cache_read_input_tokens) and
// those written to it (cache_creation_input_tokens).
type counts struct{ input, cacheRead, cacheWrite, output int64 }

// usage is c in the runtime's meaning (model.Usage): the input tokens are the whole prompt,
// the three input counts summed, and the cached ones the cache reads. A cache write stays
// input: it is billed at least at the input price.
func (c counts) usage() model.Usage {
	return model.Usage{InputTokens: c.input + c.cacheRead + c.cacheWrite, CachedInputTokens: c.cacheRead, OutputTokens: c.output}
}

// usage reads a whole answer's token usage.
func usage(u ant.Usage) model.Usage {
	return counts{input: u.InputTokens, cacheRead: u.CacheReadInputTokens, cacheWrite: u.CacheCreationInputTokens, output: u.OutputTokens}.usage()
}

// streamedInput is a streamed tool_use block's input in the form of a whole answer's: the
// API sends a whole answer's input as a JSON object it serialized, compact, so the joined
// partial_json pieces are compacted (whitespace only: every digit and escape is kept); a
// block without pieces has its start's input.
func streamedInput(start, joined string, got bool) string {
	if !got {
		return start
	}
	var b bytes.Buffer
	if json.Compact(&b, []byte(joined)) != nil {
		return joined // not JSON: the runtime's admission refuses it as sent
	}
	return b.String()
}

func (m *Model) streamOnce(ctx context.Context, params ant.MessageNewParams, toolName string, onChunk func([]byte) error) (*model.Response, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := m.client.Messages.NewStreaming(ctx, params)
	defer st.Close()
	var text strings.Builder
	resp := &model.Response{}
	var tokens counts
	toolBlock := int64(-1)
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "message_start", "message_delta":
			noteMessage(resp, &tokens, ev)
		case "content_block_start":
			if ev.ContentBlock.Type == "tool_use" && ev.ContentBlock.Name == toolName {
				toolBlock = ev.Index
			}
		case "content_block_delta":
			if ev.Delta.Type != "input_json_delta" || ev.Index != toolBlock || ev.Delta.PartialJSON == "" {
				continue
			}
			text.WriteString(ev.Delta.PartialJSON)
			if err := onChunk([]byte(ev.Delta.PartialJSON)); err != nil {
				cancel() // closes the connection before the rest is read
				return nil, provider.Cancelled(err)
			}
		}
	}
	if err := st.Err(); err != nil {
		return nil, provider.StreamBroke(ctx, judge, err, text.Len() > 0)
	}
	switch {
	case resp.FinishReason == string(ant.StopReasonRefusal):
		return nil, provider.Typed(model.CodeRefusal, "the model refused", nil)
	case text.Len() == 0:
		return nil, provider.Typed(model.CodeRefusal, "the answer has no call of the proposal tool (stop reason "+resp.FinishReason+")", nil)
	}
	resp.Text = []byte(text.String())
	return resp, nil
}

// judge classifies an attempt's error: the SDK's API error carries the HTTP status and
// response.
var judge = provider.JudgeSDK(func(e *ant.Error) (int, *http.Response) { return e.StatusCode, e.Response })
