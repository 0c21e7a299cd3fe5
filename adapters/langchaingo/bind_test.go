package langchaingo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"google.golang.org/protobuf/proto"

	lc "github.com/beamagents/beamagents/adapters/langchaingo"
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// runHandler runs h over one external event of key "k" in memory, answered by script, and
// returns its final replies' messages and dead letters' reasons.
func runHandler(t *testing.T, script string, h agent.Handler) (finals, dead []string) {
	t.Helper()
	m, err := model.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Definition{Name: "bind-test", Handler: h, Model: m, ModelID: "m"})
	if err != nil {
		t.Fatal(err)
	}
	env, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("go")}})
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{AllowUnsigned: true}, OrderResolutionMs: 1}}
	d.Run(context.Background(), []byte("k"), [][]byte{env}, func(kind int64, b []byte) {
		switch kind {
		case records.OutFinal:
			f := &pb.FinalReply{}
			proto.Unmarshal(b, f)
			finals = append(finals, f.GetMessage())
		case records.OutDeadLetter:
			r := &pb.ActivationErrorRecord{}
			proto.Unmarshal(b, r)
			dead = append(dead, r.GetReason()+": "+r.GetDetail())
		}
	})
	return finals, dead
}

// A single prompt without tools (llms.GenerateFromSinglePrompt) is one model call whose text
// is the answer.
func TestSinglePrompt(t *testing.T) {
	finals, dead := runHandler(t, `{"entity":"k","seq":0,"step":0,"response_text":"hello from the runtime"}`, func(hc *agent.Context, _ agent.Trigger) error {
		m, _ := lc.New()
		out, err := llms.GenerateFromSinglePrompt(hc.Context(), m, "say hello")
		if err != nil {
			return err
		}
		return hc.Reply(out)
	})
	if len(dead) != 0 || len(finals) != 1 || finals[0] != "hello from the runtime" {
		t.Fatalf("finals %q, dead letters %q", finals, dead)
	}
}

// A per-call option that would change the request fails the activation; no model call.
func TestUnsupportedOptionFails(t *testing.T) {
	_, dead := runHandler(t, `{"entity":"k","seq":0,"step":0,"response_text":"unused"}`, func(hc *agent.Context, _ agent.Trigger) error {
		m, _ := lc.New()
		_, err := m.Call(hc.Context(), "say hello", llms.WithTemperature(0.9))
		return err
	})
	if len(dead) != 1 || !strings.HasPrefix(dead[0], "internal_panic") || !strings.Contains(dead[0], "Temperature") {
		t.Fatalf("dead letters %q", dead)
	}
}

// A tool admits its input again: arguments the schema refuses never become an intent.
func TestToolAdmitsItsInput(t *testing.T) {
	da, err := devices.DispatchArgs()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, input string }{
		{"an undeclared member", `{"device_id":"17","reason":"r","urgent":true}`},
		{"an id out of range", `{"device_id":18446744073709551616,"reason":"r"}`},
		{"not an object", `[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, dead := runHandler(t, ``, func(hc *agent.Context, _ agent.Trigger) error {
				_, tools := lc.New(agent.ToolDecl{Name: devices.ToolDispatch, Args: da})
				_, err := tools[0].Call(hc.Context(), tc.input)
				return err
			})
			if len(dead) != 1 || !strings.HasPrefix(dead[0], "proposal_refused") {
				t.Fatalf("dead letters %q", dead)
			}
		})
	}
}

// Outside a handler run (a Go context without its agent.Context) the model and the tools
// refuse to answer.
func TestUnbound(t *testing.T) {
	m, tools := lc.New(agent.ToolDecl{Name: "t"})
	if _, err := m.Call(context.Background(), "hi"); !errors.Is(err, lc.ErrUnbound) {
		t.Errorf("model: %v", err)
	}
	if _, err := tools[0].Call(context.Background(), `{}`); !errors.Is(err, lc.ErrUnbound) {
		t.Errorf("tool: %v", err)
	}
}
