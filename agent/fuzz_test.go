package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/tracing"
)

// FuzzActivate feeds arbitrary envelopes and arbitrary model output to a fresh key and to a
// suspended one: the core never panics, a failure commits nothing and emits exactly one dead
// letter, and every emitted intent verifies.
func FuzzActivate(f *testing.F) {
	sc := loadScenario(f, "testdata/scenarios/tool_round_trip.json")
	ok, _ := proto.Marshal(toolResult(2000, 0, 0, "packed"))
	f.Add(ok, []byte(`not json`))
	e, _ := proto.Marshal(ext(1, "hi"))
	f.Add(e, []byte(`{"schema":"x"}`+"\n"))
	kr := testKeyring(f)
	suspendedAgent := newTestAgent(f, sc.script(f), sc.Limits, false)
	suspended := host.MapStore{}
	res, err := host.Activate(context.Background(), suspendedAgent, suspended, ext(1000, "where is A-1?"), host.Deps{Keyring: kr})
	if err != nil {
		f.Fatal(err)
	}
	suspended.Apply(res)

	f.Fuzz(func(t *testing.T, envBytes, modelText []byte) {
		env := &pb.AgentEnvelope{}
		if proto.Unmarshal(envBytes, env) != nil {
			return
		}
		line, _ := json.Marshal(map[string]any{"response_text": string(modelText)})
		m, err := model.ParseScript(line)
		if err != nil {
			t.Fatal(err)
		}
		a := newTestAgent(t, m, agentLimits{}, false)
		for _, base := range []host.MapStore{{}, suspended} {
			st := host.MapStore{}
			for k, v := range base {
				st[k] = v
			}
			res, err := host.Activate(context.Background(), a, st, env, host.Deps{Keyring: kr})
			check(t, res, err, kr)
		}
	})
}

func check(t *testing.T, res *host.Result, err error, kr *intent.Keyring) {
	t.Helper()
	if err != nil {
		traces := 0 // besides the ERROR events of calls a circuit breaker refused
		for _, ev := range res.Traces {
			if ev.GetEventType() != pb.TraceEvent_ERROR || ev.GetAttributes()[tracing.AttrErrorType] != string(model.CodeCircuitOpen) {
				traces++
			}
		}
		if len(res.Writes) != 0 || len(res.DeadLetters) != 1 || len(res.Intents)+len(res.Finals)+traces+len(res.Snapshots) != 0 {
			t.Fatalf("failed activation (%v) left writes %d, dead letters %d, other outputs", err, len(res.Writes), len(res.DeadLetters))
		}
		return
	}
	for _, ti := range res.Intents {
		if o := intent.Verify(ti, kr); o != intent.OK {
			t.Fatalf("emitted intent verifies as %v", o)
		}
	}
}
