package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/anthropic"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/negotiate"
)

const testKey = "sk-test-3f9a1c7e5b2d4a6f8e0c1b3d5f7a9c2e"

type hosted interface {
	model.Streamer
	Profile(*model.Request) (*provider.Profile, error)
}

var apis = []struct {
	name string
	new  func(provider.Config) (hosted, error)
}{
	{llmtest.OpenAI, func(c provider.Config) (hosted, error) { return openai.New(c) }},
	{llmtest.Anthropic, func(c provider.Config) (hosted, error) { return anthropic.New(c) }},
}

func supportSchema(tb testing.TB) *interaction.Schema {
	tb.Helper()
	s, err := support.Schema()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func request(tb testing.TB) *model.Request {
	s := supportSchema(tb)
	return &model.Request{
		Model:          "test-model",
		Messages:       []model.Message{{Role: model.RoleSystem, Content: "Answer with the proposal."}, {Role: model.RoleUser, Content: "Where is my order A-1001?"}},
		ResponseSchema: s.ProviderJSONSchema(),
		SchemaDigest:   s.Digest(),
	}
}

// start serves api with answer and returns a provider configured for it.
func start(t *testing.T, api string, cfg provider.Config, answer func(int, []byte) llmtest.Reply) (*llmtest.Server, hosted) {
	t.Helper()
	srv := llmtest.New(api, answer)
	t.Cleanup(srv.Close)
	t.Setenv("BEAMAGENTS_TEST_KEY", testKey)
	cfg.BaseURL, cfg.APIKey, cfg.Model = srv.BaseURL(), "env:BEAMAGENTS_TEST_KEY", "test-model"
	if cfg.Backoff == 0 {
		cfg.Backoff, cfg.MaxBackoff = time.Millisecond, 5*time.Millisecond
	}
	for _, a := range apis {
		if a.name == api {
			m, err := a.new(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return srv, m
		}
	}
	t.Fatalf("no api %s", api)
	return nil, nil
}

func always(r llmtest.Reply) func(int, []byte) llmtest.Reply {
	return func(int, []byte) llmtest.Reply { return r }
}

// sequence answers request i with rs[i] (the last one from then on).
func sequence(rs ...llmtest.Reply) func(int, []byte) llmtest.Reply {
	return func(n int, _ []byte) llmtest.Reply { return rs[min(n, len(rs)-1)] }
}

const (
	lookup       = `{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"A-1001"}}`
	lookupDoc    = `"value":{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"A-1001"}}}` + "\n"
	spacedRefund = "{\n  \"case\": \"support.refund\",\n  \"fields\": {\n    \"support.refund.order_id\": \"A-2002\",\n    \"support.refund.amount_cents\": 4599,\n    \"support.refund.reason\": \"arrived broken\"\n  }\n}"
)

// call runs one call, streamed (through the streaming canonicalizer and decoder) or not.
func call(t *testing.T, m hosted, streamed bool) (*model.Response, error) {
	t.Helper()
	req := request(t)
	if !streamed {
		return m.Generate(context.Background(), req)
	}
	return m.Stream(context.Background(), req, newStream(t).Push)
}

func admitter(tb testing.TB) *negotiate.Admitter {
	tb.Helper()
	adm, err := negotiate.NewAdmitter(supportSchema(tb), negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		tb.Fatal(err)
	}
	return adm
}

// newStream starts the push-style admission of one streamed answer.
func newStream(tb testing.TB) *negotiate.Stream {
	tb.Helper()
	st, err := admitter(tb).NewStream()
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func admit(t *testing.T, text []byte) []byte {
	t.Helper()
	out, err := admitter(t).Admit(text)
	if err != nil {
		t.Fatalf("admission refused %q: %v", text, err)
	}
	return out.Document
}

func TestValidAnswers(t *testing.T) {
	for _, api := range apis {
		for _, streamed := range []bool{true, false} {
			for _, tc := range []struct{ name, text, wantTail string }{
				{"canonical value", lookup, lookupDoc},
				{"whitespace and a JSON-number integer", spacedRefund, `"support.refund.amount_cents":"4599","support.refund.reason":"arrived broken"}}}` + "\n"},
			} {
				t.Run(api.name+"/"+tc.name+"/stream="+map[bool]string{true: "yes", false: "no"}[streamed], func(t *testing.T) {
					srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: tc.text, Model: "test-model-2026", InputTokens: 182, OutputTokens: 31}))
					resp, err := call(t, m, streamed)
					if err != nil {
						t.Fatal(err)
					}
					if !sameJSON(resp.Text, []byte(tc.text)) {
						t.Fatalf("text %q, want %q", resp.Text, tc.text)
					}
					if doc := admit(t, resp.Text); !bytes.HasSuffix(doc, []byte(tc.wantTail)) {
						t.Fatalf("canonical document %s", doc)
					}
					if resp.Usage != (model.Usage{InputTokens: 182, OutputTokens: 31}) || resp.Model != "test-model-2026" || resp.FinishReason == "" {
						t.Fatalf("usage %+v model %q finish %q", resp.Usage, resp.Model, resp.FinishReason)
					}
					checkRequest(t, api.name, srv.Requests()[0], streamed)
					if h := srv.Headers()[0]; !strings.Contains(h.Get("Authorization")+h.Get("X-Api-Key"), testKey) {
						t.Fatalf("the key did not reach the server: %v", h)
					}
				})
			}
		}
	}
}

// checkRequest: the schema goes in the API's own structured-output form, without the value
// envelope's constants.
func checkRequest(t *testing.T, api string, body []byte, streamed bool) {
	t.Helper()
	s := supportSchema(t)
	if bytes.Contains(body, []byte(s.Digest())) || bytes.Contains(body, []byte(interaction.ValueFormat)) {
		t.Fatal("the request asks the model to copy the envelope")
	}
	var req struct {
		Stream         bool `json:"stream"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Strict bool            `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		ToolChoice struct{ Type, Name string } `json:"tool_choice"`
		Tools      []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if req.Stream != streamed {
		t.Fatalf("stream %v", req.Stream)
	}
	switch api {
	case llmtest.OpenAI:
		rf := req.ResponseFormat
		if rf.Type != "json_schema" || !rf.JSONSchema.Strict || rf.JSONSchema.Name != "support_proposal" || len(rf.JSONSchema.Schema) == 0 {
			t.Fatalf("response_format %+v", rf)
		}
	case llmtest.Anthropic:
		if req.ToolChoice.Type != "tool" || req.ToolChoice.Name != "support_proposal" || len(req.Tools) != 1 || req.Tools[0].Name != "support_proposal" ||
			!bytes.Contains(req.Tools[0].InputSchema, []byte(`"type":"object"`)) {
			t.Fatalf("tool_choice %+v tools %s", req.ToolChoice, body)
		}
	}
}

// Hostile answers, refused mid-stream: the server must see the connection close before it
// has sent the rest of its events.
var hostile = []struct{ name, text string }{
	{"undeclared case", `{"case":"support.delete_all_orders","fields":{"support.reply.text":"` + strings.Repeat("x", 900) + `"}}`},
	{"prose instead of JSON", `I'm sorry, as an AI I think you should simply refund everything. ` + strings.Repeat("blah ", 200)},
	{"integer over its bound", `{"case":"support.refund","fields":{"support.refund.order_id":"A-1","support.refund.amount_cents":99999999,"support.refund.reason":"` + strings.Repeat("y", 200) + `"}}`},
	{"string over its byte bound", `{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"` + strings.Repeat("z", 1000) + `"}}`},
}

func TestHostileAnswerCancelsTheRequest(t *testing.T) {
	for _, api := range apis {
		for _, h := range hostile {
			t.Run(api.name+"/"+h.name, func(t *testing.T) {
				srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: h.text, ChunkBytes: 16}))
				srv.Step = make(chan struct{}, 64)
				st := newStream(t)
				received := 0
				_, err := m.Stream(context.Background(), request(t), func(c []byte) error {
					received += len(c)
					if err := st.Push(c); err != nil {
						return err
					}
					srv.Step <- struct{}{}
					return nil
				})
				var refusal *stream.Refusal
				if !errors.Is(err, model.ErrCancelled) || !errors.As(err, &refusal) {
					t.Fatalf("err %v; want a cancel carrying the stream refusal", err)
				}
				ob := waitObservation(t, srv)
				if !ob.Disconnected || ob.Events >= ob.TotalEvents {
					t.Fatalf("server sent %d of %d events (disconnected %v)", ob.Events, ob.TotalEvents, ob.Disconnected)
				}
				if len(srv.Requests()) != 1 {
					t.Fatalf("%d requests: a refusal is never retried", len(srv.Requests()))
				}
				t.Logf("FIGURE hostile %s %s: refused after %d answer bytes; server sent %d of %d events, %d of %d bytes",
					api.name, h.name, received, ob.Events, ob.TotalEvents, ob.Bytes, ob.TotalBytes)
			})
		}
	}
}

// waitObservation waits for the handler to record what it sent.
func waitObservation(t *testing.T, srv *llmtest.Server) llmtest.Observation {
	for range 500 {
		if obs := srv.Observations(); len(obs) > 0 && (obs[0].Disconnected || obs[0].Events == obs[0].TotalEvents && obs[0].TotalEvents > 0) {
			return obs[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server never finished the response")
	return llmtest.Observation{}
}

func TestFailures(t *testing.T) {
	ok := llmtest.Reply{Text: lookup}
	cases := []struct {
		name     string
		cfg      provider.Config
		replies  []llmtest.Reply
		want     error // nil: success
		requests int
	}{
		// A backoff of an hour: only the server's Retry-After lets the retry come soon.
		{"429 with retry-after, then success", provider.Config{Backoff: time.Hour, MaxBackoff: time.Hour},
			[]llmtest.Reply{{Status: 429, Header: map[string]string{"Retry-After": "1"}}, ok}, nil, 2},
		{"500, then success", provider.Config{}, []llmtest.Reply{{Status: 500}, ok}, nil, 2},
		{"503 on every attempt", provider.Config{MaxAttempts: 3}, []llmtest.Reply{{Status: 503}}, model.ErrUnavailable, 3},
		{"400 is not retried", provider.Config{}, []llmtest.Reply{{Status: 400}, ok}, model.ErrRejected, 1},
		{"401 is not retried", provider.Config{}, []llmtest.Reply{{Status: 401}, ok}, model.ErrRejected, 1},
		{"timeout on every attempt", provider.Config{Timeout: 100 * time.Millisecond, MaxAttempts: 2}, []llmtest.Reply{{Hang: 5 * time.Second}}, model.ErrTimeout, 2},
		// The call's own deadline ends it in the first attempt, though 9 attempts remain.
		{"the call's deadline", provider.Config{Timeout: 2 * time.Second, MaxAttempts: 10, CallTimeout: 300 * time.Millisecond}, []llmtest.Reply{{Hang: 5 * time.Second}}, model.ErrTimeout, 1},
		{"timeout, then success", provider.Config{Timeout: 100 * time.Millisecond}, []llmtest.Reply{{Hang: 5 * time.Second}, ok}, nil, 2},
		{"refusal", provider.Config{}, []llmtest.Reply{{Refusal: "I can't help with that."}}, model.ErrRefusal, 1},
		{"empty content", provider.Config{}, []llmtest.Reply{{}}, model.ErrRefusal, 1},
	}
	for _, api := range apis {
		for _, streamed := range []bool{true, false} {
			for _, tc := range cases {
				t.Run(api.name+"/"+tc.name+"/stream="+map[bool]string{true: "yes", false: "no"}[streamed], func(t *testing.T) {
					srv, m := start(t, api.name, tc.cfg, sequence(tc.replies...))
					resp, err := call(t, m, streamed)
					switch {
					case tc.want == nil && (err != nil || string(resp.Text) != lookup):
						t.Fatalf("err %v", err)
					case tc.want != nil && !errors.Is(err, tc.want):
						t.Fatalf("err %v, want %v", err, tc.want)
					}
					if n := len(srv.Requests()); n != tc.requests {
						t.Fatalf("%d requests, want %d", n, tc.requests)
					}
					if err != nil && strings.Contains(err.Error(), testKey) {
						t.Fatal("the key appears in an error")
					}
				})
			}
		}
	}
}

func TestMalformedStream(t *testing.T) {
	bodies := map[string]string{
		llmtest.OpenAI:    "data: {\"id\":\"chatcmpl-01\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"ca\"}}]}\n\ndata: {not json at all\n\n",
		llmtest.Anthropic: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\nevent: content_block_delta\ndata: {broken\n\n",
	}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{RawBody: bodies[api.name]}))
			_, err := call(t, m, true)
			if !errors.Is(err, model.ErrMalformed) && !errors.Is(err, model.ErrRefusal) {
				t.Fatalf("err %v", err)
			}
			if len(srv.Requests()) != 1 {
				t.Fatalf("%d requests: a malformed stream is not retried", len(srv.Requests()))
			}
		})
	}
}

// sameJSON compares texts up to insignificant whitespace: a server may send the tool input
// compacted.
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}
