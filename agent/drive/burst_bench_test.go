package drive_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/model"
)

// BenchmarkBurst: the in-memory cost of three external events of one key 500 ms apart, as
// one burst (one activation, one model call) and as three activations, against an
// in-process scripted model (every answer a reply): what a burst saves besides the model's
// own latency and price.
func BenchmarkBurst(b *testing.B) {
	for _, v := range []struct {
		name  string
		burst burst.Rule
	}{
		{"burst3", burst.Rule{Window: 2 * time.Second}},
		{"single3", burst.Rule{}},
	} {
		b.Run(v.name, func(b *testing.B) {
			d := scriptedDriver(b, v.burst)
			t := &testing.T{}
			values := [][]byte{extAt(t, "c", 0, "hi"), extAt(t, "c", 500, "my order is late"), extAt(t, "c", 1000, "it is A-1001")}
			calls := 0
			b.ResetTimer()
			for range b.N {
				calls += d.Run(context.Background(), []byte("c"), values, func(int64, []byte) {}).ModelCalls
			}
			b.ReportMetric(float64(calls)/float64(b.N), "model_calls/op")
		})
	}
}

// scriptedDriver is a handler agent that proposes a reply to its trigger's text, answered by
// a scripted model in process.
func scriptedDriver(b *testing.B, rule burst.Rule) *drive.Driver {
	b.Helper()
	m, err := model.ParseScript(benchScript(b))
	if err != nil {
		b.Fatal(err)
	}
	schema, err := support.Schema()
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(agent.Definition{Name: "burst-bench", Schema: schema, Model: m, ModelID: "scripted", Burst: rule,
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			v, err := hc.Propose(agent.Ask{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
			if err != nil {
				return fmt.Errorf("propose: %w", err)
			}
			return hc.ReplyValue(v, schema)
		}})
	if err != nil {
		b.Fatal(err)
	}
	return &drive.Driver{Core: drive.Core{Agent: a, OrderResolutionMs: 1}}
}
