// Package llmtest serves the two model APIs the hosted providers speak, OpenAI's Chat
// Completions and Anthropic's Messages, on loopback, written from the vendors' public API
// references: the JSON bodies, the error bodies and the server-sent-event framing (OpenAI:
// "data: {chunk}\n\n" lines ending in "data: [DONE]"; Anthropic: "event: TYPE\ndata: {…}\n\n"
// from message_start to message_stop). Tests script each reply and observe what the server
// managed to send before a client went away.
//
// The servers are strict by default: a request that breaks a rule the vendor's API enforces
// (tool names, duplicate tools, strict-mode schemas, forced tools, message order: the Rule
// constants) is answered 400 with the API's own error body, as the vendor would, before any
// scripted reply is asked for, and its rule is recorded (Server.Refusals). A test that must
// send such a request on purpose sets Server.Lenient.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Reply is the server's answer to one request.
type Reply struct {
	Status int               // an HTTP error status with the API's error body; 0 means 200
	Header map[string]string // extra response headers (Retry-After, …)
	// Text is the answer: the message content (OpenAI) or the forced tool's input JSON
	// (Anthropic). Chunks, when set, are its streamed deltas; else Text goes in ChunkBytes pieces.
	Text       string
	Chunks     []string
	ChunkBytes int
	Refusal    string        // a refusal instead of an answer
	Hang       time.Duration // wait this long (or until the client leaves) before answering
	RawBody    string        // sent verbatim as the body (malformed responses)
	Model      string        // the answering model id; default "test-model"
	// InputTokens counts the whole prompt and CachedInputTokens those of its tokens read from
	// the prompt cache (at most InputTokens), as the runtime counts them (model.Usage). Each
	// API reports them in its own shape: OpenAI's prompt_tokens is the whole prompt and
	// prompt_tokens_details.cached_tokens the cache reads; Anthropic's input_tokens leaves the
	// cache reads out, which cache_read_input_tokens counts (cache_creation_input_tokens is 0).
	InputTokens, CachedInputTokens, OutputTokens int64
	// ToolCalls answers with native tool calls (with Text, if any, as the message's text):
	// OpenAI tool_calls (finish reason tool_calls), Anthropic tool_use blocks (stop reason
	// tool_use). Arguments are sent as written: OpenAI's as the arguments string, Anthropic's
	// as the raw input object. Streamed, each call's arguments go in ChunkBytes pieces:
	// OpenAI tool_calls[].function.arguments deltas, Anthropic input_json_delta events.
	ToolCalls []ToolCall

	tool string // the forced tool's name (Anthropic), from the request
	out  func() // counts the request out of InFlight
}

// ToolCall is one native tool call of a reply.
type ToolCall struct {
	ID, Name, Arguments string
}

// Observation is what the server sent for one request.
type Observation struct {
	Events       int  // SSE events written
	TotalEvents  int  // SSE events the reply had
	Bytes        int  // body bytes written
	TotalBytes   int  // body bytes the whole reply has
	Disconnected bool // the client closed the connection before the reply was complete
}

// Server is a scripted model API server. Answer chooses each reply from the request number
// (from 0) and body.
type Server struct {
	*httptest.Server
	Answer func(n int, body []byte) Reply
	// Step, when set, paces streams: the client sends a token on it for each answer event it
	// has processed, and the server keeps at most Window (default 2) answer events
	// unacknowledged, waiting for a token or for the client to leave.
	Step   chan struct{}
	Window int
	// Delay, when set, holds every request this long (or until the client leaves) before
	// Answer is asked, like a provider's latency.
	Delay time.Duration
	// Lenient turns the vendor's request rules off: every request is answered as scripted.
	Lenient bool

	inFlight, peak, conns atomic.Int64

	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	obs      []Observation
	refusals []Rule
	api      string
}

// API names.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// New starts a server for api ("openai" or "anthropic").
func New(api string, answer func(n int, body []byte) Reply) *Server {
	return start(api, answer, nil)
}

// start starts a server, its listener wrapped by wrap when it is not nil.
func start(api string, answer func(n int, body []byte) Reply, wrap func(net.Listener) net.Listener) *Server {
	s := &Server{Answer: answer, api: api}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.Server.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if wrap != nil {
		s.Server.Listener = wrap(s.Server.Listener)
	}
	s.Server.Start()
	return s
}

// BaseURL is the URL to configure the provider with.
func (s *Server) BaseURL() string {
	if s.api == OpenAI {
		return s.URL + "/v1"
	}
	return s.URL
}

// Requests returns the request bodies received so far.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.bodies...)
}

// Headers returns the request headers received so far.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// Observations returns what was sent per request, once each handler has returned.
func (s *Server) Observations() []Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Observation(nil), s.obs...)
}

// Refusals returns the rule each refused request broke, in arrival order.
func (s *Server) Refusals() []Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Rule(nil), s.refusals...)
}

// InFlight counts the requests being handled now; Peak the most there ever were at once.
func (s *Server) InFlight() int { return int(s.inFlight.Load()) }

// Connections counts the connections clients opened.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// Peak is the most requests the server handled at once.
func (s *Server) Peak() int { return int(s.peak.Load()) }

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	cur := s.inFlight.Add(1)
	// A request is counted out before its last bytes are written: its client may send the
	// next request as soon as it has read them, before this handler returns.
	var once sync.Once
	out := func() { once.Do(func() { s.inFlight.Add(-1) }) }
	defer out()
	for p := s.peak.Load(); cur > p && !s.peak.CompareAndSwap(p, cur); p = s.peak.Load() {
	}
	want := "/v1/chat/completions"
	if s.api == Anthropic {
		want = "/v1/messages"
	}
	if r.Method != http.MethodPost || r.URL.Path != want {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.bodies)
	s.bodies = append(s.bodies, body)
	s.headers = append(s.headers, r.Header.Clone())
	s.obs = append(s.obs, Observation{})
	s.mu.Unlock()
	if !s.Lenient {
		check := checkOpenAI
		if s.api == Anthropic {
			check = checkAnthropic
		}
		if r := check(body); r != nil {
			b := s.refusalBody(r)
			s.mu.Lock()
			s.refusals = append(s.refusals, r.rule)
			s.obs[n] = Observation{Bytes: len(b), TotalBytes: len(b)}
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			out()
			w.Write(b)
			return
		}
	}
	if s.Delay > 0 {
		select {
		case <-time.After(s.Delay):
		case <-r.Context().Done():
			return
		}
	}
	rep := s.Answer(n, body)
	var req struct {
		Stream     bool `json:"stream"`
		ToolChoice struct {
			Name string `json:"name"`
		} `json:"tool_choice"`
	}
	json.Unmarshal(body, &req)
	rep.tool, rep.out = req.ToolChoice.Name, out
	ob := s.reply(w, r, rep, req.Stream)
	s.mu.Lock()
	s.obs[n] = ob
	s.mu.Unlock()
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request, rep Reply, stream bool) Observation {
	if rep.Hang > 0 {
		select {
		case <-time.After(rep.Hang):
		case <-r.Context().Done():
			return Observation{Disconnected: true}
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	if rep.Model == "" {
		rep.Model = "test-model"
	}
	switch {
	case rep.Status != 0 && rep.Status != http.StatusOK:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		b := s.errorBody(rep.Status)
		rep.out()
		w.Write(b)
		return Observation{Bytes: len(b), TotalBytes: len(b)}
	case rep.RawBody != "":
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		rep.out()
		w.Write([]byte(rep.RawBody))
		return Observation{Bytes: len(rep.RawBody), TotalBytes: len(rep.RawBody)}
	case !stream:
		w.Header().Set("Content-Type", "application/json")
		b := s.completion(rep)
		rep.out()
		w.Write(b)
		return Observation{Bytes: len(b), TotalBytes: len(b)}
	}
	events := s.events(rep)
	ob := Observation{TotalEvents: len(events)}
	for _, e := range events {
		ob.TotalBytes += len(e)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	unacked := 0
	for i, e := range events {
		if i == len(events)-1 {
			rep.out()
		}
		// Paced: at most Window answer events may be unacknowledged before the next is sent
		// (an SDK may read an event ahead before handing one over).
		for s.Step != nil && isDelta(e) && unacked >= s.window() {
			select {
			case <-s.Step:
				unacked--
			case <-r.Context().Done():
				ob.Disconnected = true
				return ob
			case <-time.After(10 * time.Second):
				unacked = 0
			}
		}
		if _, err := w.Write(e); err != nil {
			ob.Disconnected = true
			return ob
		}
		fl.Flush()
		ob.Events, ob.Bytes = ob.Events+1, ob.Bytes+len(e)
		if isDelta(e) {
			unacked++
		}
	}
	if s.Step != nil {
		// Wait for the client to read the end or to leave, so a late disconnect is seen.
		select {
		case <-r.Context().Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return ob
}

func (s *Server) window() int {
	if s.Window <= 0 {
		return 2
	}
	return s.Window
}

// isDelta reports whether an event carries answer text (the events a client acknowledges).
func isDelta(e []byte) bool {
	return bytes.Contains(e, []byte(`"content":`)) && !bytes.Contains(e, []byte(`"content":""`)) && !bytes.Contains(e, []byte(`"finish_reason":"`)) ||
		bytes.Contains(e, []byte(`input_json_delta`)) || bytes.Contains(e, []byte(`"arguments":"`)) && !bytes.Contains(e, []byte(`"arguments":""`))
}

func (s *Server) chunks(rep Reply) []string {
	if rep.Chunks != nil {
		return rep.Chunks
	}
	n := rep.ChunkBytes
	if n <= 0 {
		n = 8
	}
	var out []string
	for t := rep.Text; len(t) > 0; {
		// A piece ends on a character boundary, as every provider's deltas do: each event is
		// JSON, whose strings hold whole characters.
		cut := min(n, len(t))
		for cut < len(t) && !utf8.RuneStart(t[cut]) {
			cut++
		}
		out = append(out, t[:cut])
		t = t[cut:]
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (s *Server) errorBody(status int) []byte {
	if s.api == Anthropic {
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		return []byte(js(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": "scripted " + strconv.Itoa(status)}}))
	}
	return []byte(js(map[string]any{"error": map[string]any{"message": "scripted " + strconv.Itoa(status), "type": "invalid_request_error", "param": nil, "code": nil}}))
}

// refusalBody is the API's error body of a refused request.
func (s *Server) refusalBody(r *refusal) []byte {
	if s.api == Anthropic {
		return []byte(js(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": r.message}}))
	}
	var param, code any
	if r.param != "" {
		param = r.param
	}
	if r.rule == RuleToolName || r.rule == RuleSchemaName {
		code = "invalid_value"
	}
	return []byte(js(map[string]any{"error": map[string]any{"message": r.message, "type": "invalid_request_error", "param": param, "code": code}}))
}

func (s *Server) completion(rep Reply) []byte {
	if len(rep.ToolCalls) > 0 || s.api == Anthropic && rep.tool == "" && rep.Refusal == "" && rep.Text != "" {
		// Tool calls, or a text answer to a request that forces no tool (native tools).
		return s.toolCompletion(rep)
	}
	if s.api == Anthropic {
		content := []any{map[string]any{"type": "tool_use", "id": "toolu_01", "name": rep.tool, "input": json.RawMessage(rep.Text)}}
		stop := "tool_use"
		if rep.Refusal != "" || rep.Text == "" {
			content, stop = []any{map[string]any{"type": "text", "text": rep.Refusal}}, "refusal"
			if rep.Refusal == "" {
				stop = "end_turn"
			}
		}
		return []byte(js(map[string]any{"id": "msg_01", "type": "message", "role": "assistant", "model": rep.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(rep, rep.OutputTokens)}))
	}
	msg := map[string]any{"role": "assistant", "content": rep.Text, "refusal": nil}
	if rep.Refusal != "" {
		msg["content"], msg["refusal"] = nil, rep.Refusal
	}
	return []byte(js(map[string]any{"id": "chatcmpl-01", "object": "chat.completion", "created": 1767225600, "model": rep.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": "stop"}},
		"usage":   openAIUsage(rep)}))
}

// openAIUsage is a Chat Completions usage object: prompt_tokens counts the whole prompt, the
// cache reads included.
func openAIUsage(rep Reply) map[string]any {
	return map[string]any{"prompt_tokens": rep.InputTokens, "completion_tokens": rep.OutputTokens, "total_tokens": rep.InputTokens + rep.OutputTokens,
		"prompt_tokens_details":     map[string]any{"cached_tokens": rep.CachedInputTokens, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
}

// anthropicUsage is a Messages usage object of output tokens: input_tokens counts the prompt
// tokens neither read from nor written to the prompt cache.
func anthropicUsage(rep Reply, output int64) map[string]any {
	return map[string]any{"input_tokens": rep.InputTokens - rep.CachedInputTokens, "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": rep.CachedInputTokens, "output_tokens": output}
}

func (s *Server) toolCompletion(rep Reply) []byte {
	if s.api == Anthropic {
		var content []any
		if rep.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.Text})
		}
		for _, c := range rep.ToolCalls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Arguments)})
		}
		stop := "tool_use"
		if len(rep.ToolCalls) == 0 {
			stop = "end_turn"
		}
		return []byte(js(map[string]any{"id": "msg_01", "type": "message", "role": "assistant", "model": rep.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": anthropicUsage(rep, rep.OutputTokens)}))
	}
	var calls []any
	for _, c := range rep.ToolCalls {
		calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "tool_calls": calls}
	if rep.Text != "" {
		msg["content"] = rep.Text
	}
	return []byte(js(map[string]any{"id": "chatcmpl-01", "object": "chat.completion", "created": 1767225600, "model": rep.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": "tool_calls"}},
		"usage":   openAIUsage(rep)}))
}

func (s *Server) events(rep Reply) [][]byte {
	if s.api == Anthropic {
		return s.anthropicEvents(rep)
	}
	data := func(v any) []byte { return []byte("data: " + js(v) + "\n\n") }
	chunk := func(delta map[string]any, finish any) []byte {
		return data(map[string]any{"id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 1767225600, "model": rep.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}})
	}
	ev := [][]byte{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	if rep.Refusal != "" {
		ev = append(ev, chunk(map[string]any{"refusal": rep.Refusal}, nil))
	}
	for _, c := range s.chunks(rep) {
		ev = append(ev, chunk(map[string]any{"content": c}, nil))
	}
	finish := "stop"
	for i, call := range rep.ToolCalls {
		finish = "tool_calls"
		ev = append(ev, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": call.ID, "type": "function",
			"function": map[string]any{"name": call.Name, "arguments": ""}}}}, nil))
		for _, a := range s.chunks(Reply{Text: call.Arguments, ChunkBytes: rep.ChunkBytes}) {
			ev = append(ev, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": a}}}}, nil))
		}
	}
	ev = append(ev, chunk(map[string]any{}, finish))
	ev = append(ev, data(map[string]any{"id": "chatcmpl-01", "object": "chat.completion.chunk", "created": 1767225600, "model": rep.Model,
		"choices": []any{}, "usage": openAIUsage(rep)}))
	return append(ev, []byte("data: [DONE]\n\n"))
}

func (s *Server) anthropicEvents(rep Reply) [][]byte {
	event := func(typ string, v map[string]any) []byte {
		v["type"] = typ
		return []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", typ, js(v)))
	}
	ev := [][]byte{event("message_start", map[string]any{"message": map[string]any{"id": "msg_01", "type": "message", "role": "assistant",
		"model": rep.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": anthropicUsage(rep, 1)}})}
	stop := "tool_use"
	if len(rep.ToolCalls) > 0 || rep.tool == "" && rep.Refusal == "" && rep.Text != "" {
		ev = append(ev, s.anthropicToolEvents(rep, event)...)
		if len(rep.ToolCalls) == 0 {
			stop = "end_turn"
		}
	} else if rep.Refusal != "" {
		stop = "refusal"
		ev = append(ev, event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
			event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": rep.Refusal}}),
			event("content_block_stop", map[string]any{"index": 0}))
	} else if len(s.chunks(rep)) > 0 {
		ev = append(ev, event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "tool_use", "id": "toolu_01", "name": rep.tool, "input": map[string]any{}}}))
		for _, c := range s.chunks(rep) {
			ev = append(ev, event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": c}}))
		}
		ev = append(ev, event("content_block_stop", map[string]any{"index": 0}))
	} else {
		stop = "end_turn"
	}
	ev = append(ev, event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rep.OutputTokens}}),
		event("message_stop", map[string]any{}))
	return ev
}

// anthropicToolEvents are the content blocks of an answer to a request with native tools: its
// text, then one tool_use block per call, its input streamed as input_json_delta pieces.
func (s *Server) anthropicToolEvents(rep Reply, event func(string, map[string]any) []byte) [][]byte {
	var ev [][]byte
	index := 0
	if rep.Text != "" {
		ev = append(ev, event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}}))
		for _, c := range s.chunks(Reply{Text: rep.Text, ChunkBytes: rep.ChunkBytes}) {
			ev = append(ev, event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": c}}))
		}
		ev = append(ev, event("content_block_stop", map[string]any{"index": index}))
		index++
	}
	for _, call := range rep.ToolCalls {
		ev = append(ev, event("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "tool_use", "id": call.ID, "name": call.Name, "input": map[string]any{}}}))
		for _, a := range s.chunks(Reply{Text: call.Arguments, ChunkBytes: rep.ChunkBytes}) {
			ev = append(ev, event("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": a}}))
		}
		ev = append(ev, event("content_block_stop", map[string]any{"index": index}))
		index++
	}
	return ev
}

// Refused returns a base URL for api where nothing listens: every connection is refused.
func Refused(api string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	if api == OpenAI {
		url += "/v1"
	}
	return url
}
