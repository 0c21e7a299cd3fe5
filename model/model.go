package model

import (
	"context"
	"encoding/json"
)

// Roles of chat messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message. An assistant message may carry the tool calls the model made
// (ToolCalls); a tool message (RoleTool) answers the call ToolCallID with Content.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ToolCall
	ToolCallID string
}

// Tool is a native tool declaration: a function the model may call, whose arguments must
// satisfy Parameters, the JSON Schema projection of the tool's closed argument schema
// (interaction.Schema.ProviderJSONSchema); Digest identifies the compiled schema.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Digest      string
}

// ToolCall is one tool call in a model's answer: the provider's call id, the tool's name and
// its arguments exactly as the model sent them (JSON text, not yet admitted).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Sampling holds sampling parameters. A nil pointer leaves the provider's default.
type Sampling struct {
	Temperature     *float64
	TopP            *float64
	MaxOutputTokens int64 // 0: provider default
	Seed            *int64
}

// Request is one model call.
type Request struct {
	// Model is the provider's model id.
	Model    string
	Messages []Message
	// ResponseSchema is the JSON Schema the response must satisfy (the proposal's provider
	// projection); SchemaDigest identifies the compiled schema it came from.
	ResponseSchema json.RawMessage
	SchemaDigest   string
	// Tools are the native tools the model may call; with tools and no ResponseSchema the
	// answer is free text and tool calls.
	Tools    []Tool
	Sampling Sampling
	// The asking activation step. Providers ignore it; the replay cache and Scripted key on it.
	EntityKey []byte
	Seq       int64
	Step      uint32
}

// Usage is token accounting as the provider reports it, in one meaning for every vendor (the
// OpenTelemetry GenAI conventions'): InputTokens counts the whole prompt, including the tokens
// read from or written to the provider's prompt cache, and CachedInputTokens those of them
// read from it (billed at the cached-input price). A provider whose API counts them apart
// (Anthropic's input_tokens leaves both out) adds them up.
type Usage struct {
	InputTokens       int64
	CachedInputTokens int64 // of InputTokens
	OutputTokens      int64
}

// Response is a model's complete answer.
type Response struct {
	Text []byte
	// ToolCalls are the tool calls of the answer, in the provider's order (native tools only).
	ToolCalls    []ToolCall
	Usage        Usage
	Model        string // the model that answered, when the provider says
	FinishReason string
	// AnsweredBy is the id of the fallback model that answered (Fallback), empty when the
	// first model did; Passed lists the models passed over before it.
	AnsweredBy string
	Passed     []Pass
}

// Model is a language model provider.
type Model interface {
	// Generate returns the complete response to req.
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Streamer is implemented by models that deliver their response in chunks. onChunk sees each
// chunk in order; when it returns an error the provider call is cancelled and Stream returns
// that error (wrapped). On success the Response carries the whole text.
type Streamer interface {
	Model
	Stream(ctx context.Context, req *Request, onChunk func([]byte) error) (*Response, error)
}

// ToolDelta is one streamed piece of a native tool call's arguments: Arguments continues the
// arguments of call Index (its position in the answer, from 0), whose provider id and tool
// name are ID and Name on every delta of the call.
type ToolDelta struct {
	Index     int
	ID, Name  string
	Arguments []byte
}

// ToolStreamer is implemented by models that stream an answer to a request with native tools
// (Request.Tools). onDelta sees each piece of each call's arguments in order as the provider
// sends it; when it returns an error the provider call is cancelled and StreamTools returns
// that error (wrapped). On success the Response is the whole answer, as Generate returns it:
// the text and every call with its arguments exactly as sent.
type ToolStreamer interface {
	Model
	StreamTools(ctx context.Context, req *Request, onDelta func(ToolDelta) error) (*Response, error)
}
