package transforms_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
)

// waitsAgent is a handler agent of durable waits, for the differential tests: the first word
// of its event chooses what it waits for.
const waitsAgent = "differential-waits"

func init() {
	agent.Register(waitsAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: waitsAgent, Handler: waitsHandler,
			Limits: agent.Limits{ToolTimeoutMs: 60000, ApprovalTimeoutMs: 90000, MaxEscalations: 1}})
	})
}

// waitsHandler: "tools" asks two lookups with a 30 s deadline, then sleeps 10 s; "signal"
// awaits "go" for 30 s, ships what it carried, then awaits "note" without a deadline.
func waitsHandler(hc *agent.Context, tr agent.Trigger) error {
	kind, _, _ := strings.Cut(string(tr.Event), " ")
	switch kind {
	case "tools":
		res, err := hc.ToolsBy(tr.EventTimeMs+30000,
			agent.ToolCall{Tool: "lookup", ArgsJSON: `{"q":"a"}`}, agent.ToolCall{Tool: "lookup", ArgsJSON: `{"q":"b"}`})
		if err != nil {
			return err
		}
		if err := hc.Sleep(10 * time.Second); err != nil {
			return err
		}
		return hc.Reply(fmt.Sprintf("%s:%s %s:%s", res[0].GetStatus(), res[0].GetPayload(), res[1].GetStatus(), res[1].GetPayload()))
	case "signal":
		sig, ok, err := hc.AwaitBy("go", tr.EventTimeMs+30000)
		if err != nil {
			return err
		}
		if ok {
			if _, err := hc.Tool("ship", `{"box":"`+string(sig.GetPayload())+`"}`); err != nil {
				return err
			}
		}
		note, err := hc.Await("note")
		if err != nil {
			return err
		}
		return hc.Reply(fmt.Sprintf("go %v %s; note %s", ok, sig.GetPayload(), note.GetPayload()))
	}
	return hc.Reply("nothing to wait for")
}

// waitsTraffic generates n keys of traffic for waitsAgent: answers early (before the event),
// in time, exactly at a deadline and late, duplicated, signals queued for a later wait, for
// the wrong key or never sent; records shuffled.
func waitsTraffic(seed uint64, n int) *scenario.Set {
	rng := rand.New(rand.NewPCG(seed, 0x57a175))
	set := &scenario.Set{}
	add := func(env *pb.AgentEnvelope) {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		set.Records = append(set.Records, b)
		if rng.IntN(8) == 0 {
			set.Records = append(set.Records, b) // a duplicate delivery
		}
	}
	// at is an answer's time relative to t0 and the wait's deadline d: early, in time, at the
	// deadline, late, or never (-1).
	at := func(t0, d int64) int64 {
		switch rng.IntN(6) {
		case 0:
			return t0 - 1000*int64(1+rng.IntN(5))
		case 1, 2:
			return t0 + 1000*int64(1+rng.IntN(int((d-t0)/1000)-1))
		case 3:
			return d
		case 4:
			return d + 1000*int64(1+rng.IntN(20))
		}
		return -1
	}
	for i := range n {
		key := fmt.Sprintf("wait-%03d", i)
		set.Keys = append(set.Keys, key)
		t := scenario.T0 + int64(i)*1000
		for seq := range int64(1 + rng.IntN(2)) {
			t0 := t + 1000*int64(rng.IntN(3))
			if rng.IntN(2) == 0 {
				add(waitEnv(key, t0, &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("tools")}))
				for step := range uint32(2) {
					if r := at(t0, t0+30000); r >= 0 {
						add(waitEnv(key, r, &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: intent.ID([]byte(key), seq, step),
							EntityKey: []byte(key), Seq: seq, Status: pb.ToolResult_OK, Payload: []byte(fmt.Sprint(r - t0)), CompletedAtMs: r}}))
					}
				}
			} else {
				add(waitEnv(key, t0, &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("signal")}))
				if r := at(t0, t0+30000); r >= 0 {
					id := fmt.Sprintf("g-%d-%d", seq, rng.IntN(2))
					add(waitSignal(key, r, "go", id, fmt.Sprint(r-t0)))
					if rng.IntN(4) == 0 { // the same signal id again, later: dropped or unawaited
						add(waitSignal(key, r+1000, "go", id, "again"))
					}
				}
				if rng.IntN(2) == 0 {
					add(waitEnv(key, t0+40000, &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: intent.ID([]byte(key), seq, 1),
						EntityKey: []byte(key), Seq: seq, Status: pb.ToolResult_OK, CompletedAtMs: t0 + 40000}}))
				}
				if r := at(t0, t0+90000); r >= 0 {
					add(waitSignal(key, r+500, "note", fmt.Sprintf("n-%d", seq), "fragile"))
				}
				if rng.IntN(6) == 0 { // signed for another key: refused at decoding
					s := waitSignal(key, t0+2000, "go", "x", "")
					s.GetSignal().EntityKey = []byte("other")
					add(s)
				}
			}
			t = t0 + 200000
		}
	}
	rng.Shuffle(len(set.Records), func(i, j int) { set.Records[i], set.Records[j] = set.Records[j], set.Records[i] })
	return set
}

func waitEnv(key string, t int64, p any) *pb.AgentEnvelope {
	env := &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t}
	switch p := p.(type) {
	case *pb.AgentEnvelope_ExternalEvent:
		env.Payload = p
	case *pb.AgentEnvelope_ToolResult:
		env.Payload = p
	}
	return env
}

func waitSignal(key string, t int64, name, id, payload string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: t, Payload: &pb.AgentEnvelope_Signal_{Signal: &pb.AgentEnvelope_Signal{
		Name: name, SignalId: id, Payload: []byte(payload), Sender: "ops", SentAtMs: t, EntityKey: []byte(key)}}}
}

// differentialWaits runs the waits traffic through the four executions.
func differentialWaits(t *testing.T) {
	set := waitsTraffic(11, 120)
	ref, kr := keyringRef(t)
	a, err := agent.Build(waitsAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
	stats := compareExecutions(t, waitsAgent, nil, ref, d, set, nil)
	t.Logf("%d keys, %d records; outputs: %v; dead letters: %v", len(set.Keys), stats.records, stats.outputs, stats.reasons)
	for _, name := range []string{pipeline.IntentsName, pipeline.FinalsName, pipeline.DeadLettersName} {
		if stats.outputs[name] == 0 {
			t.Errorf("the traffic produced no %s: the generator lost its coverage", name)
		}
	}
	for _, reason := range []records.Reason{records.ReasonSignalUnawaited, records.ReasonOrphanedResult, records.ReasonApprovalTimeout, records.ReasonEnvelopeInvalid} {
		if stats.reasons[string(reason)] == 0 {
			t.Errorf("no %s dead letter in the traffic: the generator lost its coverage", reason)
		}
	}
}
