package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// exactArgs carries an integer a float64 cannot hold: 2^53 + 1.
const exactArgs = `{"device_id":9007199254740993,"reason":"91.0 °C"}`

func deviceTools(tb testing.TB) []model.Tool {
	tb.Helper()
	la, err := devices.LookupArgs()
	if err != nil {
		tb.Fatal(err)
	}
	da, err := devices.DispatchArgs()
	if err != nil {
		tb.Fatal(err)
	}
	return []model.Tool{
		{Name: devices.ToolLookup, Description: "Looks a device up.", Parameters: la.ProviderJSONSchema(), Digest: la.Digest()},
		{Name: devices.ToolDispatch, Description: "Dispatches a technician.", Parameters: da.ProviderJSONSchema(), Digest: da.Digest()},
	}
}

// Native tools over each API on loopback: the request declares the tools (the fields of each
// argument schema, closed), the answer's tool calls keep their arguments' exact text, a
// streamed call is answered whole, and a follow-up carries the assistant's calls and the tool
// results in the API's own shape.
func TestNativeTools(t *testing.T) {
	for _, api := range apis {
		for _, streamed := range []bool{false, true} {
			name := api.name
			if streamed {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				srv, m := start(t, api.name, provider.Config{}, sequence(
					llmtest.Reply{Text: "Dispatching.", ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: provider.WireName(devices.ToolDispatch), Arguments: exactArgs}}, InputTokens: 7, OutputTokens: 3},
					llmtest.Reply{Text: "Done: ticket T-1."},
				))
				req := &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "device 9007199254740993 is hot"}}, Tools: deviceTools(t)}
				generate := func(req *model.Request) (*model.Response, error) {
					if streamed {
						return m.Stream(context.Background(), req, func([]byte) error { return nil })
					}
					return m.Generate(context.Background(), req)
				}
				resp, err := generate(req)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != devices.ToolDispatch || resp.ToolCalls[0].ID != "call_1" {
					t.Fatalf("tool calls %+v", resp.ToolCalls)
				}
				var got, want any
				json.Unmarshal([]byte(resp.ToolCalls[0].Arguments), &got)
				json.Unmarshal([]byte(exactArgs), &want)
				if !strings.Contains(resp.ToolCalls[0].Arguments, "9007199254740993") {
					t.Fatalf("arguments %q lost the exact id", resp.ToolCalls[0].Arguments)
				}
				body := srv.Requests()[0]
				checkDeclared(t, api.name, body)

				req.Messages = append(req.Messages,
					model.Message{Role: model.RoleAssistant, Content: string(resp.Text), ToolCalls: resp.ToolCalls},
					model.Message{Role: model.RoleTool, Content: `{"ticket":"T-1"}`, ToolCallID: "call_1"})
				final, err := generate(req)
				if err != nil {
					t.Fatal(err)
				}
				if string(final.Text) != "Done: ticket T-1." || len(final.ToolCalls) != 0 {
					t.Fatalf("final %q %+v", final.Text, final.ToolCalls)
				}
				second := string(srv.Requests()[1])
				for _, w := range toolMessage[api.name] {
					if !strings.Contains(second, w) {
						t.Errorf("the follow-up lacks %s:\n%s", w, second)
					}
				}
			})
		}
	}
}

// toolMessage is what a follow-up request must carry, by API.
var toolMessage = map[string][]string{
	llmtest.OpenAI:    {`"tool_calls":[{"id":"call_1","function":{"arguments":"{\"device_id\":9007199254740993,`, `"role":"tool"`, `"tool_call_id":"call_1"`},
	llmtest.Anthropic: {`"type":"tool_use"`, `"id":"call_1"`, `"input":{"device_id":9007199254740993,`, `"type":"tool_result"`, `"tool_use_id":"call_1"`},
}

// checkDeclared checks the first request declares both tools with closed argument objects
// and forces neither a response format nor a tool.
func checkDeclared(t *testing.T, api string, body []byte) {
	t.Helper()
	var req struct {
		Tools []struct {
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input_schema"`
			Function struct {
				Name       string          `json:"name"`
				Strict     bool            `json:"strict"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		ResponseFormat json.RawMessage `json:"response_format"`
		ToolChoice     json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != 2 || req.ResponseFormat != nil || req.ToolChoice != nil {
		t.Fatalf("request declares %d tools, response_format %s, tool_choice %s", len(req.Tools), req.ResponseFormat, req.ToolChoice)
	}
	for i, want := range []string{provider.WireName(devices.ToolLookup), provider.WireName(devices.ToolDispatch)} { // as sent
		name, schema := req.Tools[i].Name, req.Tools[i].Input
		if api == llmtest.OpenAI {
			name, schema = req.Tools[i].Function.Name, req.Tools[i].Function.Parameters
			if !req.Tools[i].Function.Strict {
				t.Errorf("tool %s is not strict", name)
			}
		}
		if name != want || !bytes.Contains(schema, []byte(`"device_id"`)) || !bytes.Contains(schema, []byte(`"additionalProperties":false`)) {
			t.Errorf("tool %d: %s %s", i, name, schema)
		}
	}
}

// The devices agent over each API: the anomaly's one request declares the tools, the
// dispatch intent's args_json holds 9007199254740993 exactly and verifies, and its result
// resumes the activation to the model's answer with a second request that carries the tool
// result.
func TestDevicesAgentOverHTTP(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			srv, m := start(t, api.name, provider.Config{}, sequence(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_9", Name: provider.WireName(devices.ToolDispatch), Arguments: exactArgs}}},
				llmtest.Reply{Text: "Technician dispatched: ticket T-9."},
			))
			def, err := devices.Definition(devices.ModelScript)
			if err != nil {
				t.Fatal(err)
			}
			def.Model, def.ModelID = m, "test-model"
			a, err := agent.New(def)
			if err != nil {
				t.Fatal(err)
			}
			kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{9}, 32)})
			st := host.MapStore{}
			key := []byte("dev-9007199254740993")
			for i, ev := range []string{`{"device_id":"9007199254740993","milli_c":20000}`, `{"device_id":"9007199254740993","milli_c":91000}`} {
				res, err := host.Activate(context.Background(), a, st, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: int64(1000 + i), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(ev)}}, host.Deps{Keyring: kr})
				if err != nil {
					t.Fatal(err)
				}
				st.Apply(res)
				if i == 0 && len(srv.Requests()) != 0 {
					t.Fatal("a quiet reading made a request")
				}
				if i == 1 {
					if len(res.Intents) != 1 || res.Intents[0].GetArgsJson() != `{"device_id":"9007199254740993","reason":"91.0 °C"}` {
						t.Fatalf("intents %v", res.Intents)
					}
					if o := intent.Verify(res.Intents[0], kr); o != intent.OK {
						t.Fatalf("intent verifies as %v", o)
					}
					checkDeclared(t, api.name, srv.Requests()[0])
					id := res.Intents[0].GetIntentId()
					res, err = host.Activate(context.Background(), a, st, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 5000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
						IntentId: id, EntityKey: key, Seq: 1, Status: pb.ToolResult_OK, Payload: []byte(`{"ticket":"T-9"}`),
					}}}, host.Deps{Keyring: kr})
					if err != nil {
						t.Fatal(err)
					}
					if len(res.Finals) != 1 || res.Finals[0].GetMessage() != "Technician dispatched: ticket T-9." {
						t.Fatalf("finals %v", res.Finals)
					}
				}
			}
			if n := len(srv.Requests()); n != 2 {
				t.Fatalf("%d requests, want 2", n)
			}
			if !bytes.Contains(srv.Requests()[1], []byte(`T-9`)) {
				t.Errorf("the second request lacks the tool result:\n%s", srv.Requests()[1])
			}
		})
	}
}
