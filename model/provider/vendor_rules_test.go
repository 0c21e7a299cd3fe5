package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// The requests the runtime can still send that break a vendor's rule, through the provider
// code path: each is answered 400 by the strict stand-in and ends the call as model_rejected,
// unretried. These are conversations a caller (a handler, an adapter) builds out of order.
func TestVendorRulesThroughTheProvider(t *testing.T) {
	tools := func(tb testing.TB) []model.Tool { return deviceTools(tb) }
	call := model.ToolCall{ID: "call_1", Name: devices.ToolLookup, Arguments: `{"device_id":17}`}
	user := model.Message{Role: model.RoleUser, Content: "device 17 is hot"}
	for _, c := range []struct {
		api  string
		rule llmtest.Rule
		msgs []model.Message
	}{
		// OpenAI: a tool message that answers no call of the assistant message before it.
		{llmtest.OpenAI, llmtest.RuleToolMessage, []model.Message{user, {Role: model.RoleTool, Content: "row", ToolCallID: "call_1"}}},
		// OpenAI: a call left unanswered before the next user message.
		{llmtest.OpenAI, llmtest.RuleUnansweredCall, []model.Message{user, {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}}, user}},
		// Anthropic: the first message is the assistant's.
		{llmtest.Anthropic, llmtest.RuleRoleOrder, []model.Message{{Role: model.RoleAssistant, Content: "Hello."}, user}},
		// Anthropic: a tool_result answering no tool_use of the assistant message before it.
		{llmtest.Anthropic, llmtest.RuleToolResult, []model.Message{user, {Role: model.RoleAssistant, Content: "Looking."}, {Role: model.RoleTool, Content: "row", ToolCallID: "call_1"}}},
		// Anthropic: a tool_use left without its tool_result in the next user message.
		{llmtest.Anthropic, llmtest.RuleUnansweredCall, []model.Message{user, {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}}, user}},
	} {
		for _, streamed := range []bool{false, true} {
			name := c.api + "/" + string(c.rule)
			if streamed {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				srv, m := start(t, c.api, provider.Config{}, always(llmtest.Reply{Text: "never sent"}))
				req := &model.Request{Model: "test-model", Messages: c.msgs, Tools: tools(t)}
				var err error
				if streamed {
					_, err = m.(model.ToolStreamer).StreamTools(context.Background(), req, func(model.ToolDelta) error { return nil })
				} else {
					_, err = m.Generate(context.Background(), req)
				}
				if !errors.Is(err, model.ErrRejected) {
					t.Fatalf("err %v, want model_rejected", err)
				}
				if got := srv.Refusals(); !slices.Equal(got, []llmtest.Rule{c.rule}) {
					t.Fatalf("refusals %v, want [%s]", got, c.rule)
				}
			})
		}
	}
}

// Tool names the runtime maps: the declared names go out as wire names the strict stand-ins
// accept, and two declared names that would go out as one are refused before anything is
// sent, as model_tool_name.
func TestToolNamesThroughTheProvider(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name+"/mapped", func(t *testing.T) {
			srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: "ok"}))
			tl := deviceTools(t)
			tl[0].Name = "devices.lookup/v2 (beta)"
			if _, err := m.Generate(context.Background(), &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, Tools: tl}); err != nil {
				t.Fatal(err)
			}
			if body := string(srv.Requests()[0]); !strings.Contains(body, `"devices_lookup_v2__beta_"`) || strings.Contains(body, "devices.lookup") {
				t.Fatalf("request does not carry the wire names:\n%s", body)
			}
		})
		for _, names := range [][2]string{{"devices.lookup", "devices_lookup"}, {"devices.lookup", "devices.lookup"}} {
			t.Run(api.name+"/refused/"+names[1], func(t *testing.T) {
				srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: "ok"}))
				tl := deviceTools(t)
				tl[0].Name, tl[1].Name = names[0], names[1]
				_, err := m.Generate(context.Background(), &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, Tools: tl})
				if !errors.Is(err, model.ErrToolName) {
					t.Fatalf("err %v, want model_tool_name", err)
				}
				if n := len(srv.Requests()); n != 0 {
					t.Fatalf("%d requests sent", n)
				}
			})
		}
	}
}

// An answer's tool call maps back to its declared name only by the wire name it was sent
// under: a model that answers with the declared name itself (devices.dispatch, sent as
// devices_dispatch) gets back a name no tool is declared by, whole or streamed, and the
// conversation that continues a mapped call carries the wire name again.
func TestAnsweredToolNamesMapBack(t *testing.T) {
	for _, api := range apis {
		for _, streamed := range []bool{false, true} {
			for _, c := range []struct {
				answered, want string
			}{
				{provider.WireName(devices.ToolDispatch), devices.ToolDispatch},
				{devices.ToolDispatch, "\x00" + devices.ToolDispatch},
				{"devices_selfdestruct", "devices_selfdestruct"},
			} {
				name := api.name + "/" + c.answered
				if streamed {
					name += "/streamed"
				}
				t.Run(name, func(t *testing.T) {
					srv, m := start(t, api.name, provider.Config{}, sequence(
						llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: c.answered, Arguments: exactArgs}}},
						llmtest.Reply{Text: "done"},
					))
					req := &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "hot"}}, Tools: deviceTools(t)}
					var deltas []string
					var resp *model.Response
					var err error
					if streamed {
						resp, err = m.(model.ToolStreamer).StreamTools(context.Background(), req, func(d model.ToolDelta) error {
							deltas = append(deltas, d.Name)
							return nil
						})
					} else {
						resp, err = m.Generate(context.Background(), req)
					}
					if err != nil {
						t.Fatal(err)
					}
					if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != c.want {
						t.Fatalf("calls %+v, want the name %q", resp.ToolCalls, c.want)
					}
					for _, d := range deltas {
						if d != c.want {
							t.Fatalf("a delta names %q, want %q", d, c.want)
						}
					}
					if c.want != devices.ToolDispatch {
						return
					}
					req.Messages = append(req.Messages,
						model.Message{Role: model.RoleAssistant, ToolCalls: resp.ToolCalls},
						model.Message{Role: model.RoleTool, Content: `{"ticket":"T-1"}`, ToolCallID: "call_1"})
					if _, err := m.Generate(context.Background(), req); err != nil {
						t.Fatal(err)
					}
					if body := string(srv.Requests()[1]); !strings.Contains(body, `"devices_dispatch"`) || strings.Contains(body, `"devices.dispatch"`) {
						t.Fatalf("the follow-up does not carry the wire name:\n%s", body)
					}
				})
			}
		}
	}
}

// Requests the runtime no longer sends (its names are mapped, its schemas are its profiles,
// its forced tool is its own, its turns alternate), sent raw: the strict stand-ins answer
// each with 400 and the vendor's own error body, and a valid request of each API is answered.
func TestVendorRulesRaw(t *testing.T) {
	const (
		user       = `{"role":"user","content":"hi"}`
		closed     = `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`
		openAITool = `{"type":"function","function":{"name":%q,"strict":true,"parameters":%s}}`
		antTool    = `{"name":%q,"input_schema":%s}`
	)
	f := fmt.Sprintf
	oaiBody := func(extra string) string {
		return `{"model":"m","messages":[` + user + `]` + extra + `}`
	}
	antBody := func(extra string) string {
		return `{"model":"m","max_tokens":64,"messages":[` + user + `]` + extra + `}`
	}
	format := func(name, schema string) string {
		return `,"response_format":{"type":"json_schema","json_schema":{"name":"` + name + `","strict":true,"schema":` + schema + `}}`
	}
	for _, c := range []struct {
		name string
		api  string
		body string
		rule llmtest.Rule // "" for a request the API answers
	}{
		{"valid", llmtest.OpenAI, oaiBody(`,"tools":[` + f(openAITool, "devices_lookup", closed) + `],"tool_choice":{"type":"function","function":{"name":"devices_lookup"}}`), ""},
		{"valid response format", llmtest.OpenAI, oaiBody(format("support_v1_Proposal", closed)), ""},
		{"function name with a dot", llmtest.OpenAI, oaiBody(`,"tools":[` + f(openAITool, "devices.lookup", closed) + `]`), llmtest.RuleToolName},
		{"function name of 65", llmtest.OpenAI, oaiBody(`,"tools":[` + f(openAITool, strings.Repeat("a", 65), closed) + `]`), llmtest.RuleToolName},
		{"duplicate functions", llmtest.OpenAI, oaiBody(`,"tools":[` + f(openAITool, "a", closed) + `,` + f(openAITool, "a", closed) + `]`), llmtest.RuleDuplicateTool},
		{"strict: a property not required", llmtest.OpenAI, oaiBody(`,"tools":[` + f(openAITool, "a", `{"type":"object","properties":{"a":{"type":"string"}},"required":[],"additionalProperties":false}`) + `]`), llmtest.RuleStrictSchema},
		{"strict: an open object", llmtest.OpenAI, oaiBody(format("s", `{"type":"object","properties":{"a":{"type":"object","properties":{},"required":[]}},"required":["a"],"additionalProperties":false}`)), llmtest.RuleStrictSchema},
		{"strict: maxLength", llmtest.OpenAI, oaiBody(format("s", `{"type":"object","properties":{"a":{"type":"string","maxLength":5}},"required":["a"],"additionalProperties":false}`)), llmtest.RuleStrictSchema},
		{"strict: oneOf", llmtest.OpenAI, oaiBody(format("s", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"}]}},"required":["a"],"additionalProperties":false}`)), llmtest.RuleStrictSchema},
		{"strict: a custom keyword", llmtest.OpenAI, oaiBody(format("s", `{"type":"object","properties":{"a":{"type":"string","x-max-bytes":5}},"required":["a"],"additionalProperties":false}`)), llmtest.RuleStrictSchema},
		{"strict: a root that is no object", llmtest.OpenAI, oaiBody(format("s", `{"type":"string"}`)), llmtest.RuleStrictSchema},
		{"strict: in $defs", llmtest.OpenAI, oaiBody(format("s", `{"type":"object","properties":{"a":{"$ref":"#/$defs/d"}},"required":["a"],"additionalProperties":false,"$defs":{"d":{"type":"string","minLength":1}}}`)), llmtest.RuleStrictSchema},
		{"schema name with a dot", llmtest.OpenAI, oaiBody(format("support.v1.Proposal", closed)), llmtest.RuleSchemaName},
		{"tool_choice of an undeclared function", llmtest.OpenAI, oaiBody(`,"tools":[` + f(openAITool, "a", closed) + `],"tool_choice":{"type":"function","function":{"name":"b"}}`), llmtest.RuleToolChoice},

		{"valid", llmtest.Anthropic, antBody(`,"tools":[` + f(antTool, "devices_lookup", closed) + `],"tool_choice":{"type":"tool","name":"devices_lookup"}`), ""},
		{"tool name with a dot", llmtest.Anthropic, antBody(`,"tools":[` + f(antTool, "devices.lookup", closed) + `]`), llmtest.RuleToolName},
		{"duplicate tools", llmtest.Anthropic, antBody(`,"tools":[` + f(antTool, "a", closed) + `,` + f(antTool, "a", closed) + `]`), llmtest.RuleDuplicateTool},
		{"input_schema not an object", llmtest.Anthropic, antBody(`,"tools":[` + f(antTool, "a", `{"type":"string"}`) + `]`), llmtest.RuleInputSchema},
		{"tool_choice of an undeclared tool", llmtest.Anthropic, antBody(`,"tools":[` + f(antTool, "a", closed) + `],"tool_choice":{"type":"tool","name":"b"}`), llmtest.RuleToolChoice},
		{"two user messages in a row", llmtest.Anthropic, `{"model":"m","max_tokens":64,"messages":[` + user + `,` + user + `]}`, llmtest.RuleRoleOrder},
		{"a system message among the messages", llmtest.Anthropic, `{"model":"m","max_tokens":64,"messages":[{"role":"system","content":"x"},` + user + `]}`, llmtest.RuleRoleOrder},
		{"tool_result after text", llmtest.Anthropic, `{"model":"m","max_tokens":64,"messages":[` + user +
			`,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"a","input":{}}]}` +
			`,{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]}`, llmtest.RuleToolResult},
	} {
		t.Run(c.api+"/"+c.name, func(t *testing.T) {
			srv := llmtest.New(c.api, always(llmtest.Reply{Text: `{"a":"b"}`}))
			defer srv.Close()
			path := "/v1/messages"
			if c.api == llmtest.OpenAI {
				path = "/v1/chat/completions"
			}
			resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if c.rule == "" {
				if resp.StatusCode != http.StatusOK || len(srv.Refusals()) != 0 {
					t.Fatalf("status %d, refusals %v: %s", resp.StatusCode, srv.Refusals(), b)
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest || !slices.Equal(srv.Refusals(), []llmtest.Rule{c.rule}) {
				t.Fatalf("status %d, refusals %v, want 400 for %s: %s", resp.StatusCode, srv.Refusals(), c.rule, b)
			}
			checkErrorBody(t, c.api, b)
		})
	}
}

// checkErrorBody checks b is the API's error body: OpenAI's {"error":{message, type, param,
// code}}, Anthropic's {"type":"error","error":{type, message}}, both of type
// invalid_request_error.
func checkErrorBody(t *testing.T, api string, b []byte) {
	t.Helper()
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	var inner map[string]any
	if err := json.Unmarshal(body["error"], &inner); err != nil {
		t.Fatal(err)
	}
	want := []string{"message", "type", "param", "code"}
	if api == llmtest.Anthropic {
		want = []string{"message", "type"}
		if string(body["type"]) != `"error"` {
			t.Errorf("body type %s", body["type"])
		}
	}
	for _, k := range want {
		if _, ok := inner[k]; !ok {
			t.Errorf("the error body lacks %s: %s", k, b)
		}
	}
	if len(inner) != len(want) || inner["type"] != "invalid_request_error" {
		t.Errorf("error body %s", b)
	}
}
