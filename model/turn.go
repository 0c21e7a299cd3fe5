package model

import (
	"unicode/utf8"

	"github.com/beamagents/beamagents/internal/jsontext"
)

// turnDomain versions the canonical turn encoding.
const turnDomain = "beamagents.model.turn.v1"

// EncodeTurn returns the canonical bytes of a native-tools answer: its text and its tool calls
// as one compact JSON document with a fixed member order,
//
//	{"turn":"beamagents.model.turn.v1","text":…,"tool_calls":[{"id":…,"name":…,"arguments":…},…]}
//
// The replay cache records a tool-calling answer in this form (a plain answer is recorded as
// its text), so a cached or replayed answer carries its calls, arguments byte for byte.
func EncodeTurn(resp *Response) []byte {
	b := append([]byte(nil), `{"turn":"`+turnDomain+`","text":`...)
	b = appendString(b, string(resp.Text))
	b = append(b, `,"tool_calls":`...)
	b = appendToolCalls(b, resp.ToolCalls)
	return append(b, '}')
}

// DecodeTurn reads bytes EncodeTurn wrote; anything else is a CodeMalformed *Error.
func DecodeTurn(b []byte) (*Response, error) {
	var t struct {
		Turn      string `json:"turn"`
		Text      string `json:"text"`
		ToolCalls []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"tool_calls"`
	}
	if !utf8.Valid(b) {
		return nil, &Error{Code: CodeMalformed, Detail: "turn is not valid UTF-8"}
	}
	if err := jsontext.Decode(string(b), &t, jsontext.DecodeOptions{}); err != nil || t.Turn != turnDomain {
		return nil, &Error{Code: CodeMalformed, Detail: "not a canonical turn", Err: err}
	}
	resp := &Response{Text: []byte(t.Text)}
	for _, c := range t.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
	}
	if string(EncodeTurn(resp)) != string(b) {
		return nil, &Error{Code: CodeMalformed, Detail: "turn is not in canonical form"}
	}
	return resp, nil
}

// CachedResponse is the response a replay-cache entry of req records: for a request with
// native tools, the turn EncodeTurn wrote (falling back to plain text for bytes that are not
// a turn); otherwise the text itself.
func CachedResponse(req *Request, b []byte) *Response {
	if len(req.Tools) > 0 {
		if resp, err := DecodeTurn(b); err == nil {
			return resp
		}
	}
	return &Response{Text: b}
}

// CacheBytes is what the replay cache records of resp, an answer to req (see CachedResponse).
func CacheBytes(req *Request, resp *Response) []byte {
	if len(req.Tools) > 0 {
		return EncodeTurn(resp)
	}
	return resp.Text
}
