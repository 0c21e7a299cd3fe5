package provider_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// A conversation: a request with neither a response schema nor native tools (a handler's
// Chat without tools) is sent as a plain chat, answered in free text, whole and streamed,
// by both vendors' APIs (loopback servers that refuse what the vendors refuse).
func TestConversationWithoutSchemaOrTools(t *testing.T) {
	for _, api := range apis {
		for _, streamed := range []bool{false, true} {
			name := api.name
			if streamed {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: "Your order ships Thursday.", InputTokens: 9, OutputTokens: 6}))
				req := &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "Where is A-1001?"}}}
				var resp *model.Response
				var err error
				var chunks bytes.Buffer
				if streamed {
					resp, err = m.Stream(context.Background(), req, func(b []byte) error { chunks.Write(b); return nil })
				} else {
					resp, err = m.Generate(context.Background(), req)
				}
				if err != nil || string(resp.Text) != "Your order ships Thursday." || len(resp.ToolCalls) != 0 {
					t.Fatalf("answer %+v, %v", resp, err)
				}
				if streamed && chunks.String() != "Your order ships Thursday." {
					t.Fatalf("chunks %q", chunks.String())
				}
				body := srv.Requests()[0]
				for _, absent := range []string{`"response_format"`, `"tools"`, `"tool_choice"`} {
					if bytes.Contains(body, []byte(absent)) {
						t.Fatalf("a conversation sent %s:\n%s", absent, body)
					}
				}
				if len(srv.Refusals()) != 0 {
					t.Fatalf("the API refused: %v", srv.Refusals())
				}
			})
		}
	}
}

// The same through a handler agent: its Chat without tools gets the model's text.
func TestHandlerChatWithoutToolsOverHTTP(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			_, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: "Hello, Ada.", InputTokens: 5, OutputTokens: 3}))
			a, err := agent.New(agent.Definition{Name: "greeter", ModelID: "test-model", Handler: func(hc *agent.Context, tr agent.Trigger) error {
				turn, err := hc.Chat(agent.Chat{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
				if err != nil {
					return err
				}
				return hc.Reply(turn.Text)
			}})
			if err != nil {
				t.Fatal(err)
			}
			h := agenttest.New(t, a, agenttest.Options{Model: m})
			h.Send("u1", []byte("I am Ada"))
			if got := h.Replies("u1"); len(got) != 1 || got[0] != "Hello, Ada." {
				t.Fatalf("replies %q, dead letters %v", got, h.Outputs("u1").DeadLetters)
			}
		})
	}
}
