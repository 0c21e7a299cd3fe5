package transforms_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/internal/testkit/scenario"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/pipeline"
)

// burstsAgent gathers a key's events within 2 s into one activation (at most 3 events, 64
// bytes); an activation whose first event starts with "lookup" waits for a tool first.
const burstsAgent = "differential-bursts"

func init() {
	agent.Register(burstsAgent, func([]byte) (*agent.Agent, error) {
		return agent.New(agent.Definition{Name: burstsAgent, Handler: burstsHandler,
			Burst:  burst.Rule{Window: 2 * time.Second, MaxEvents: 3, MaxBytes: 64},
			Limits: agent.Limits{ToolTimeoutMs: 60000, MaxEscalations: 1, MaxInbox: 4}})
	})
}

// burstsHandler replies with its trigger's events as "time=text|…".
func burstsHandler(hc *agent.Context, tr agent.Trigger) error {
	if strings.HasPrefix(string(tr.Events()[0].Event), "lookup") {
		if _, err := hc.Tool("orders.lookup", `{"q":"x"}`); err != nil {
			return err
		}
	}
	var parts []string
	for _, e := range tr.Events() {
		parts = append(parts, fmt.Sprintf("%d=%s", e.EventTimeMs, e.Event))
	}
	return hc.Reply(strings.Join(parts, "|"))
}

// burstsTraffic generates n keys of bursty traffic for burstsAgent: runs of events a few
// hundred milliseconds apart (some at the same time, some over the byte bound), lookups
// whose results come while more events queue, late or never, duplicated deliveries; records
// shuffled.
func burstsTraffic(seed uint64, n int) *scenario.Set {
	rng := rand.New(rand.NewPCG(seed, 0xb0257))
	set := &scenario.Set{}
	add := func(env *pb.AgentEnvelope) {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		set.Records = append(set.Records, b)
		if rng.IntN(10) == 0 {
			set.Records = append(set.Records, b)
		}
	}
	for i := range n {
		key := fmt.Sprintf("burst-%03d", i)
		set.Keys = append(set.Keys, key)
		t := scenario.T0 + int64(i)*100
		for run := range 1 + rng.IntN(3) {
			text := func(j int) string {
				if rng.IntN(8) == 0 {
					return strings.Repeat("long ", 12) // over half the byte bound
				}
				return fmt.Sprintf("r%d-%d", run, j)
			}
			first := text(0)
			if rng.IntN(3) == 0 {
				first = "lookup " + first
				at := t + 1000*int64(1+rng.IntN(90))
				if rng.IntN(5) > 0 {
					// The seq of the lookup's activation is the runs' before it: a result for
					// the wrong one is an orphan, which is part of the traffic too.
					add(waitEnv(key, at, &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: intent.ID([]byte(key), int64(run), 0),
						EntityKey: []byte(key), Status: pb.ToolResult_OK, Payload: []byte(`{}`), CompletedAtMs: at}}))
				}
			}
			add(waitEnv(key, t, &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(first)}))
			at := t
			for j := range rng.IntN(6) {
				at += int64(rng.IntN(3)) * 400 // 0: the same time as the one before
				add(waitEnv(key, at, &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text(j + 1))}))
			}
			t = at + 1000*int64(1+rng.IntN(40))
		}
	}
	rng.Shuffle(len(set.Records), func(i, j int) { set.Records[i], set.Records[j] = set.Records[j], set.Records[i] })
	return set
}

// TestDifferentialBursts runs bursty traffic of an agent with Definition.Burst through the
// four executions (RunAgent, RunAgent with steps apart from bundles, RunAgentBatch, the
// driver): the same bursts, byte for byte.
func TestDifferentialBursts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prism pipeline")
	}
	set := burstsTraffic(3, 80)
	ref, kr := keyringRef(t)
	a, err := agent.Build(burstsAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
	bursts := 0
	for _, b := range driveSet(t, d, set)[pipeline.FinalsName] {
		f := &pb.FinalReply{}
		proto.Unmarshal(b, f)
		if strings.Contains(f.GetMessage(), "|") {
			bursts++
		}
	}
	if bursts == 0 {
		t.Fatal("no activation ran a burst: the comparison would be vacuous")
	}
	stats := compareExecutions(t, burstsAgent, nil, ref, d, set, nil)
	t.Logf("%d keys, %d records, %d replies to bursts; outputs: %v; dead letters: %v", len(set.Keys), stats.records, bursts, stats.outputs, stats.reasons)
	for _, name := range []string{pipeline.IntentsName, pipeline.FinalsName} {
		if stats.outputs[name] == 0 {
			t.Errorf("the traffic produced no %s: the generator lost its coverage", name)
		}
	}
}

// burstsModelAgent proposes a reply to its trigger's text, answered by the OpenAI-compatible
// server at the config's base URL; its bursts gather events within 2 s ("off" in the config
// disables them).
const burstsModelAgent = "differential-bursts-model"

func init() {
	agent.Register(burstsModelAgent, func(config []byte) (*agent.Agent, error) {
		var c struct {
			URL string `json:"url"`
			Off bool   `json:"off"`
		}
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, err
		}
		m, err := openai.New(provider.Config{BaseURL: c.URL, APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", Model: "gpt-test"})
		if err != nil {
			return nil, err
		}
		schema, err := support.Schema()
		if err != nil {
			return nil, err
		}
		def := agent.Definition{Name: burstsModelAgent, Schema: schema, Model: m, ModelID: "gpt-test", Burst: burst.Rule{Window: 2 * time.Second},
			Handler: func(hc *agent.Context, tr agent.Trigger) error {
				v, err := hc.Propose(agent.Ask{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
				if err != nil {
					return err
				}
				return hc.ReplyValue(v, schema)
			}}
		if c.Off {
			def.Burst = burst.Rule{}
		}
		return agent.New(def)
	})
}

// TestBurstModelCalls: three messages in two seconds on a key, against a loopback model that
// answers after 500 ms, in three shuffled arrival orders (three keys): every execution makes
// one model call per key and one reply, with the same bytes as the driver; without bursts
// three of each.
func TestBurstModelCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prism pipeline")
	}
	t.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		return llmtest.Reply{Hang: 500 * time.Millisecond, Text: `{"case":"support.reply","fields":{"support.reply.text":"On it."}}`, InputTokens: 20, OutputTokens: 5}
	})
	defer srv.Close()
	set := &scenario.Set{}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 3 {
		key := fmt.Sprintf("customer-%d", i)
		set.Keys = append(set.Keys, key)
		var recs [][]byte
		for j, text := range []string{"hi", "my order A-1001 is late", "it was due Monday"} {
			b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(waitEnv(key, scenario.T0+int64(j)*900, &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}))
			recs = append(recs, b)
		}
		rng.Shuffle(len(recs), func(a, b int) { recs[a], recs[b] = recs[b], recs[a] })
		set.Records = append(set.Records, recs...)
	}
	for _, tc := range []struct {
		name  string
		off   bool
		calls int
	}{{"bursts", false, 1}, {"off", true, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.Requests())
			config := []byte(fmt.Sprintf(`{"url":%q,"off":%v}`, srv.BaseURL(), tc.off))
			a, err := agent.Build(burstsModelAgent, config)
			if err != nil {
				t.Fatal(err)
			}
			ref, kr := keyringRef(t)
			d := &drive.Driver{Core: drive.Core{Agent: a, Deps: host.Deps{Keyring: kr}, OrderResolutionMs: 250}}
			stats := compareExecutions(t, burstsModelAgent, config, ref, d, set, nil)
			// The driver and the three Beam executions, three keys each.
			if got, want := len(srv.Requests())-before, 4*3*tc.calls; got != want || stats.outputs[pipeline.FinalsName] != 3*tc.calls {
				t.Fatalf("%d model calls, %d replies; want %d and %d", got, stats.outputs[pipeline.FinalsName], want, 3*tc.calls)
			}
		})
	}
}
