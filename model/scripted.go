package model

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/beamagents/beamagents/internal/jsontext"
)

// Scripted is a replay source standing in for a model: it answers each request with a response
// recorded in a script, and fails with ErrNoScript when no rule matches. It is safe for
// concurrent use and counts the calls it answered.
//
// A script is JSON Lines; each non-blank line not starting with '#' is one rule:
//
//	{"entity":"customer-1","seq":0,"step":0,"response":{"case":"…","fields":{…}}}
//	{"contains":"refund","response_text":"not json at all","input_tokens":12,"output_tokens":3}
//	{"last":"\"status\":\"shipped\"","response":{"case":"…","fields":{…}}}
//
// Match members, all optional, must all hold: entity (the entity key as text), seq, step,
// contains (a substring of some message's content) and last (a substring of the last
// message's content: what this call asks, such as the user's message or the tool result the
// model is to read). The first matching rule wins. Rules keyed by what was asked (contains,
// last) keep answering when the order of an activation's calls changes; rules keyed by
// position (seq, step) do not. The
// response is either "response", any JSON value, returned as the exact bytes written in the
// script, or "response_text", a string returned verbatim (for malformed or hostile output);
// "tool_calls" ([{"id":…,"name":…,"arguments":{…}},…], arguments as the exact bytes written)
// answers a request with native tools, alone or with a text.
type Scripted struct {
	// ID is reported as the answering model; default "scripted".
	ID string
	// ChunkBytes is the chunk size Stream delivers; 0 means 16.
	ChunkBytes int

	rules []scriptRule
	calls atomic.Int64
}

type scriptRule struct {
	Entity       *string         `json:"entity"`
	Seq          *int64          `json:"seq"`
	Step         *uint32         `json:"step"`
	Contains     *string         `json:"contains"`
	Last         *string         `json:"last"`
	Response     json.RawMessage `json:"response"`
	ResponseText *string         `json:"response_text"`
	InputTokens  int64           `json:"input_tokens"`
	OutputTokens int64           `json:"output_tokens"`
	ToolCalls    []scriptCall    `json:"tool_calls"`
}

// scriptCall is a native tool call a rule answers with; its arguments are the exact JSON
// bytes written in the script.
type scriptCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// ParseScript parses a script document.
func ParseScript(data []byte) (*Scripted, error) {
	s := &Scripted{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		r, err := parseRule(text)
		if err != nil {
			return nil, &Error{Code: CodeScript, Detail: fmt.Sprintf("line %d", line), Err: err}
		}
		s.rules = append(s.rules, r)
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{Code: CodeScript, Detail: "reading script", Err: err}
	}
	return s, nil
}

func parseRule(text []byte) (scriptRule, error) {
	var r scriptRule
	if err := jsontext.Decode(string(text), &r, jsontext.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return r, err
	}
	if r.Response != nil && r.ResponseText != nil || r.Response == nil && r.ResponseText == nil && len(r.ToolCalls) == 0 {
		return r, fmt.Errorf("want exactly one of response and response_text, or tool_calls")
	}
	for i, c := range r.ToolCalls {
		if c.Name == "" || len(c.Arguments) == 0 {
			return r, fmt.Errorf("tool call %d needs a name and arguments", i)
		}
	}
	return r, nil
}

// Calls returns how many requests Scripted has answered.
func (s *Scripted) Calls() int64 { return s.calls.Load() }

func (s *Scripted) id() string {
	if s.ID == "" {
		return "scripted"
	}
	return s.ID
}

// Generate answers req from the script.
func (s *Scripted) Generate(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, &Error{Code: CodeProvider, Detail: "context done", Err: err}
	}
	for i := range s.rules {
		if r := &s.rules[i]; r.matches(req) {
			s.calls.Add(1)
			return r.response(s.id()), nil
		}
	}
	return nil, &Error{Code: CodeNoScript, Detail: fmt.Sprintf("no rule for entity %q seq %d step %d", req.EntityKey, req.Seq, req.Step)}
}

// Stream answers like Generate, delivering the text in ChunkBytes pieces.
func (s *Scripted) Stream(ctx context.Context, req *Request, onChunk func([]byte) error) (*Response, error) {
	resp, err := s.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	n := s.ChunkBytes
	if n <= 0 {
		n = 16
	}
	for text := resp.Text; len(text) > 0; {
		c := text[:min(n, len(text))]
		text = text[len(c):]
		if err := onChunk(c); err != nil {
			return nil, &Error{Code: CodeCancelled, Detail: "stream cancelled by the caller", Err: err}
		}
	}
	return resp, nil
}

func (r *scriptRule) matches(req *Request) bool {
	if r.Entity != nil && *r.Entity != string(req.EntityKey) {
		return false
	}
	if r.Seq != nil && *r.Seq != req.Seq {
		return false
	}
	if r.Step != nil && *r.Step != req.Step {
		return false
	}
	if r.Last != nil && (len(req.Messages) == 0 || !strings.Contains(req.Messages[len(req.Messages)-1].Content, *r.Last)) {
		return false
	}
	if r.Contains != nil {
		for _, m := range req.Messages {
			if strings.Contains(m.Content, *r.Contains) {
				return true
			}
		}
		return false
	}
	return true
}

func (r *scriptRule) response(id string) *Response {
	text := []byte(r.Response)
	if r.ResponseText != nil {
		text = []byte(*r.ResponseText)
	}
	var calls []ToolCall
	for i, c := range r.ToolCalls {
		cid := c.ID
		if cid == "" {
			cid = fmt.Sprintf("call_%d", i)
		}
		calls = append(calls, ToolCall{ID: cid, Name: c.Name, Arguments: string(c.Arguments)})
	}
	return &Response{
		ToolCalls:    calls,
		Text:         bytes.Clone(text),
		Usage:        Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens},
		Model:        id,
		FinishReason: "stop",
	}
}
