package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/statecodec"
)

// roundTrip runs the tool round trip on a fresh key: an external event whose proposal is a
// lookup (a TOOL intent, suspension), then the tool result that resumes the activation to a
// final reply after a second model call.
func roundTrip(b *testing.B, a *agent.Agent, resultStep uint32) {
	deps := host.Deps{Keyring: testKeyring(b)}
	ctx := context.Background()
	st := host.MapStore{}
	res, err := host.Activate(ctx, a, st, ext(1000, "where is A-1?"), deps)
	if err != nil || len(res.Intents) != 1 {
		b.Fatal(err)
	}
	st.Apply(res)
	if res, err = host.Activate(ctx, a, st, toolResult(2000, 0, resultStep, `{"status":"packed"}`), deps); err != nil || len(res.Finals) != 1 {
		b.Fatal(err)
	}
}

// BenchmarkHandlerVsBindings: the same work (two model calls, one tool intent, its result, a
// final reply) by the bindings agent (the runtime's bindings handler: a step per position, its
// journal kept as an AgentResume) and by a handler agent written with the public operations
// (propose, tool, propose, reply), interleaved in one loop; handler/bindings is the ratio of
// their times.
func BenchmarkHandlerVsBindings(b *testing.B) {
	bound, _ := scenarioAgent(b, "tool_round_trip")
	sc := loadScenario(b, "testdata/scenarios/handler_tool.json")
	handler := newTestAgentWith(b, sc.script(b), sc)
	var tb, th time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		roundTrip(b, bound, 0)
		t1 := time.Now()
		roundTrip(b, handler, 1)
		th += time.Since(t1)
		tb += t1.Sub(t0)
	}
	b.ReportMetric(float64(tb.Nanoseconds())/float64(b.N), "bindings-ns/op")
	b.ReportMetric(float64(th.Nanoseconds())/float64(b.N), "handler-ns/op")
	b.ReportMetric(float64(th)/float64(tb), "handler/bindings")
}

// BenchmarkJournalReplay: resuming a handler activation whose journal holds n memory reads
// before its tool call: the resumed run replays the n reads and the call from the journal and
// replies. ns/replayed-op is the resume's time per journaled operation.
func BenchmarkJournalReplay(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("ops=%d", n+1), func(b *testing.B) {
			h := func(hc *agent.Context, tr agent.Trigger) error {
				for i := range n {
					if _, _, err := hc.Get(fmt.Sprintf("k%d", i)); err != nil {
						return err
					}
				}
				if _, err := hc.Tool("audit", `{}`); err != nil {
					return err
				}
				return hc.Reply("done")
			}
			a, err := agent.New(agent.Definition{Name: "replay", Handler: h, Model: &model.Scripted{}, Limits: agent.Limits{MaxOperations: 64}})
			if err != nil {
				b.Fatal(err)
			}
			deps := host.Deps{Keyring: testKeyring(b)}
			ctx := context.Background()
			st := host.MapStore{}
			res, err := host.Activate(ctx, a, st, ext(1000, "go"), deps)
			if err != nil || len(res.Intents) != 1 {
				b.Fatal(err)
			}
			st.Apply(res)
			resume := toolResult(2000, 0, uint32(n), `{}`)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				res, err := host.Activate(ctx, a, st, resume, deps)
				if err != nil || len(res.Finals) != 1 || len(res.Writes[statecodec.CellContinuation]) != 0 {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(n+1), "ns/replayed-op")
		})
	}
}
