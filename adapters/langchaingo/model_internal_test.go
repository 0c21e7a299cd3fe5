package langchaingo

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/model"
)

func TestToMessages(t *testing.T) {
	call := llms.ToolCall{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "devices.lookup", Arguments: `{"device_id":"17"}`}}
	for _, tc := range []struct {
		name string
		in   []llms.MessageContent
		want []model.Message
		err  bool
	}{
		{name: "conversation", in: []llms.MessageContent{
			llms.TextParts(llms.ChatMessageTypeSystem, "be brief"),
			llms.TextParts(llms.ChatMessageTypeHuman, "line 1", "line 2"),
			{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call}},
			{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c1", Name: "devices.lookup", Content: "row"}}},
			llms.TextParts(llms.ChatMessageTypeGeneric, "more"),
		}, want: []model.Message{
			{Role: model.RoleSystem, Content: "be brief"},
			{Role: model.RoleUser, Content: "line 1\nline 2"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "devices.lookup", Arguments: `{"device_id":"17"}`}}},
			{Role: model.RoleTool, Content: "row", ToolCallID: "c1"},
			{Role: model.RoleUser, Content: "more"},
		}},
		{name: "an image", in: []llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{llms.ImageURLContent{URL: "http://x/y.png"}}}}, err: true},
		{name: "a function message", in: []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeFunction, "out")}, err: true},
		{name: "a tool message with text", in: []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeTool, "out")}, err: true},
		{name: "a human message with a tool call", in: []llms.MessageContent{{Role: llms.ChatMessageTypeHuman, Parts: []llms.ContentPart{call}}}, err: true},
		{name: "a tool call without a function", in: []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "c"}}}}, err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toMessages(tc.in)
			if tc.err {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("err %v, want ErrUnsupported", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestCheckOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []llms.CallOption
		ok   bool
	}{
		{name: "none", ok: true},
		{name: "the OpenAI-functions agent's", opts: []llms.CallOption{llms.WithFunctions([]llms.FunctionDefinition{{Name: "f"}}), llms.WithStreamingFunc(nil)}, ok: true},
		{name: "tool choice auto", opts: []llms.CallOption{llms.WithToolChoice("auto")}, ok: true},
		{name: "temperature", opts: []llms.CallOption{llms.WithTemperature(0.2)}},
		{name: "another model", opts: []llms.CallOption{llms.WithModel("gpt-other")}},
		{name: "stop words", opts: []llms.CallOption{llms.WithStopWords([]string{"END"})}},
		{name: "JSON mode", opts: []llms.CallOption{llms.WithJSONMode()}},
		{name: "a forced tool", opts: []llms.CallOption{llms.WithToolChoice(llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: "f"}})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o llms.CallOptions
			for _, opt := range tc.opts {
				opt(&o)
			}
			err := checkOptions(&o)
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrUnsupported)) {
				t.Fatalf("err %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// Only bound tools may be declared; each once, in the order named.
func TestDeclared(t *testing.T) {
	m, _ := New(agent.ToolDecl{Name: "a"}, agent.ToolDecl{Name: "b"})
	decls, err := m.declared(&llms.CallOptions{Tools: []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "b"}}},
		Functions: []llms.FunctionDefinition{{Name: "a"}, {Name: "b"}}})
	if err != nil || len(decls) != 2 || decls[0].Name != "b" || decls[1].Name != "a" {
		t.Fatalf("%+v %v", decls, err)
	}
	if _, err := m.declared(&llms.CallOptions{Functions: []llms.FunctionDefinition{{Name: "c"}}}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("an unbound tool: %v", err)
	}
	if _, err := m.declared(&llms.CallOptions{Tools: []llms.Tool{{Type: "retrieval"}}}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a tool without a function: %v", err)
	}
}
