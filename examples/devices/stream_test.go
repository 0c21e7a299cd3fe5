package devices_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/anthropic"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

// paced streams through a provider and acknowledges each tool-call delta the agent admitted
// to the server (llmtest.Server.Step), so the server is never more than its window ahead of
// the admission: what it sent when the connection closed shows where the call was cancelled.
type paced struct {
	model.ToolStreamer
	srv    *llmtest.Server
	deltas int
}

func (p *paced) StreamTools(ctx context.Context, req *model.Request, onDelta func(model.ToolDelta) error) (*model.Response, error) {
	return p.ToolStreamer.StreamTools(ctx, req, func(d model.ToolDelta) error {
		if err := onDelta(d); err != nil {
			return err
		}
		p.deltas++
		p.srv.Step <- struct{}{}
		return nil
	})
}

func providerModel(t *testing.T, api string, srv *llmtest.Server) model.ToolStreamer {
	t.Helper()
	cfg := provider.Config{BaseURL: srv.BaseURL(), Model: "test-model", MaxAttempts: 1}
	var m model.ToolStreamer
	var err error
	if api == llmtest.OpenAI {
		m, err = openai.New(cfg)
	} else {
		m, err = anthropic.New(cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// anomalyAgent is the devices agent answered by m, its native-tool calls streamed or not.
func anomalyAgent(t *testing.T, m model.Model, stream bool) *agent.Agent {
	t.Helper()
	def, err := devices.Definition(nil)
	if err != nil {
		t.Fatal(err)
	}
	def.Model, def.Stream, def.ModelID = m, stream, "test-model"
	a, err := agent.New(def)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const bigDevice = "9007199254740993"

func anomalyEvent() *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte("dev-" + bigDevice), EventTimeMs: 1767225661000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(`{"device_id":"` + bigDevice + `","milli_c":91000}`)}}
}

// The anomaly's two model turns: the inline lookup, then the dispatch, with the device id as
// a JSON number beyond float precision.
func anomalyTurns(n int, _ []byte) llmtest.Reply {
	if n%2 == 0 {
		return llmtest.Reply{ChunkBytes: 5, ToolCalls: []llmtest.ToolCall{{ID: "call_lookup", Name: provider.WireName(devices.ToolLookup), Arguments: `{"device_id": ` + bigDevice + `}`}}}
	}
	return llmtest.Reply{ChunkBytes: 5, ToolCalls: []llmtest.ToolCall{{ID: "call_dispatch", Name: provider.WireName(devices.ToolDispatch),
		Arguments: `{"device_id":` + bigDevice + `, "reason":"boiler sensor reads 91.0 °C, 31 °C over the band"}`}}}
}

// A streamed native-tool answer gives the same activation, byte for byte, as the whole call:
// the same signed dispatch intent (the exact uint64 id), traces and state.
func TestStreamedToolCallsMatchTheWholeCall(t *testing.T) {
	for _, api := range []string{llmtest.OpenAI, llmtest.Anthropic} {
		t.Run(api, func(t *testing.T) {
			run := func(stream bool) (*host.Result, *llmtest.Server, *paced) {
				srv := llmtest.New(api, anomalyTurns)
				t.Cleanup(srv.Close)
				var m model.Model = providerModel(t, api, srv)
				var p *paced
				if stream {
					srv.Step = make(chan struct{}, 1024)
					p = &paced{ToolStreamer: m.(model.ToolStreamer), srv: srv}
					m = p
				}
				res, err := host.Activate(context.Background(), anomalyAgent(t, m, stream), host.MapStore{}, anomalyEvent(), host.Deps{Keyring: keyring(t)})
				if err != nil {
					t.Fatal(err)
				}
				return res, srv, p
			}
			whole, _, _ := run(false)
			streamed, srv, p := run(true)
			if len(whole.Intents) != 1 || !strings.Contains(whole.Intents[0].GetArgsJson(), `"device_id":"`+bigDevice+`"`) {
				t.Fatalf("whole call intents %v", whole.Intents)
			}
			for _, body := range srv.Requests() {
				if !strings.Contains(string(body), `"stream":true`) {
					t.Fatalf("a request was not streamed: %s", body)
				}
			}
			if p.deltas < 10 {
				t.Fatalf("only %d argument deltas were streamed", p.deltas)
			}
			same := func(what string, a, b []proto.Message) {
				if len(a) != len(b) {
					t.Fatalf("%s: %d whole, %d streamed", what, len(a), len(b))
				}
				for i := range a {
					x, _ := proto.MarshalOptions{Deterministic: true}.Marshal(a[i])
					y, _ := proto.MarshalOptions{Deterministic: true}.Marshal(b[i])
					if string(x) != string(y) {
						t.Fatalf("%s %d differs:\nwhole    %v\nstreamed %v", what, i, a[i], b[i])
					}
				}
			}
			same("intent", msgs(whole.Intents), msgs(streamed.Intents))
			same("trace", msgs(whole.Traces), msgs(streamed.Traces))
			for c, b := range whole.Writes {
				if string(streamed.Writes[c]) != string(b) {
					t.Fatalf("cell %s differs", c)
				}
			}
			if len(streamed.Writes) != len(whole.Writes) {
				t.Fatalf("writes %d whole, %d streamed", len(whole.Writes), len(streamed.Writes))
			}
		})
	}
}

func msgs[M proto.Message](in []M) []proto.Message {
	out := make([]proto.Message, len(in))
	for i, m := range in {
		out[i] = m
	}
	return out
}

// A streamed tool call whose arguments the strict decoder refuses is cancelled at the first
// refused byte: the server sees the connection close before the rest of its events, and the
// activation fails as proposal_refused, committing nothing.
func TestRefusedToolCallArgumentsCancelTheStream(t *testing.T) {
	tail := strings.Repeat("x", 3000)
	cases := []struct{ name, tool, args string }{
		{"bool for a uint64", provider.WireName(devices.ToolDispatch), `{"device_id":true,"reason":"` + tail + `"}`},
		{"negative uint64", provider.WireName(devices.ToolDispatch), `{"device_id":-17,"reason":"` + tail + `"}`},
		{"uint64 over its range", provider.WireName(devices.ToolDispatch), `{"device_id":18446744073709551616,"reason":"` + tail + `"}`},
		{"undeclared tool", "devices_selfdestruct", `{"device_id":17,"reason":"` + tail + `"}`},
		// The declared name is not the name the tool was sent under: a call by it names no tool.
		{"declared name instead of the wire name", devices.ToolDispatch, `{"device_id":17,"reason":"` + tail + `"}`},
	}
	for _, api := range []string{llmtest.OpenAI, llmtest.Anthropic} {
		for _, c := range cases {
			t.Run(api+"/"+c.name, func(t *testing.T) {
				srv := llmtest.New(api, func(int, []byte) llmtest.Reply {
					return llmtest.Reply{ChunkBytes: 8, ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: c.tool, Arguments: c.args}}}
				})
				defer srv.Close()
				srv.Step = make(chan struct{}, 1024)
				p := &paced{ToolStreamer: providerModel(t, api, srv), srv: srv}
				res, err := host.Activate(context.Background(), anomalyAgent(t, p, true), host.MapStore{}, anomalyEvent(), host.Deps{Keyring: keyring(t)})
				var ae *agent.Error
				if !errors.As(err, &ae) || ae.Reason != records.ReasonProposalRefused {
					t.Fatalf("err %v; want proposal_refused", err)
				}
				if len(res.Writes) != 0 || len(res.Intents) != 0 || len(res.DeadLetters) != 1 {
					t.Fatalf("a refused activation committed %d writes, %d intents, %d dead letters", len(res.Writes), len(res.Intents), len(res.DeadLetters))
				}
				ob := observed(t, srv)
				if !ob.Disconnected || ob.Events >= ob.TotalEvents {
					t.Fatalf("server sent %d of %d events (disconnected %v)", ob.Events, ob.TotalEvents, ob.Disconnected)
				}
				if len(srv.Requests()) != 1 {
					t.Fatalf("%d requests: a refusal is never retried", len(srv.Requests()))
				}
				t.Logf("FIGURE %s %s: refused after %d admitted deltas; server sent %d of %d events, %d of %d bytes (%s)",
					api, c.name, p.deltas, ob.Events, ob.TotalEvents, ob.Bytes, ob.TotalBytes, ae.Detail)
			})
		}
	}
}

func observed(t *testing.T, srv *llmtest.Server) llmtest.Observation {
	t.Helper()
	for range 500 {
		if obs := srv.Observations(); len(obs) > 0 && (obs[0].Disconnected || obs[0].Events == obs[0].TotalEvents && obs[0].TotalEvents > 0) {
			return obs[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server never finished the response")
	return llmtest.Observation{}
}
