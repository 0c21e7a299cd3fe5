package effector_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// memStore is the benchmarks' baseline: the same claim/complete protocol in memory, with no
// durability at all.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memStore) Claim(_ context.Context, id, owner string, _, _ int64) (store.Claim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.m[id]; ok && r != nil {
		return store.Claim{State: store.Done, Result: r}, nil
	}
	s.m[id] = nil
	return store.Claim{State: store.Claimed}, nil
}

func (s *memStore) Complete(_ context.Context, id, _ string, r []byte) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = r
	return r, nil
}

func (s *memStore) Close() error { return nil }

type noopArgs struct {
	N int64 `json:"n"`
}

// BenchmarkIntents measures intents/s through verify → dedup claim → a no-op Go tool →
// completion record → result envelope, 256 intents in flight, each intent new. The memory
// store is the baseline; bbolt is durable (a sync per batch of claims or completions).
func BenchmarkIntents(b *testing.B) {
	kr := testRing(b)
	args, err := tool.FromJSONSchema("noop.args", []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`))
	if err != nil {
		b.Fatal(err)
	}
	noop, err := tool.Func("noop", args, func(context.Context, tool.Call, noopArgs) (struct{}, error) { return struct{}{}, nil })
	if err != nil {
		b.Fatal(err)
	}
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memory", func(*testing.B) store.Store { return &memStore{m: map[string][]byte{}} }},
		{"bbolt", func(b *testing.B) store.Store { return openBolt(b) }},
		{"redis", func(b *testing.B) store.Store { return openRedis(b, redisServer(b)) }},
	}
	var round int
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			round++
			e, err := effector.New(effector.Options{Keyring: kr, Store: st.open(b), Tools: []effector.Binding{{Tool: noop}}, Clock: newClock(t0).now})
			if err != nil {
				b.Fatal(err)
			}
			recs := make([]effector.Record, b.N)
			for i := range recs {
				ti := &pb.ToolIntent{
					IntentId: intent.ID([]byte(fmt.Sprintf("bench-%d", round)), int64(i), 0), EntityKey: []byte("bench"), Seq: int64(i),
					ToolName: "noop", ArgsJson: `{"noop.args.n":"` + fmt.Sprint(i%1000) + `"}`, ExpiresAtMs: t0 + 60_000, Kind: pb.ToolIntent_TOOL,
				}
				if err := intent.Sign(ti, kr); err != nil {
					b.Fatal(err)
				}
				recs[i] = effector.Record{Intent: ti}
			}
			b.ResetTimer()
			res, _, err := e.HandleAll(context.Background(), recs, 256)
			b.StopTimer()
			if err != nil || len(res) != b.N {
				b.Fatalf("%d results, %v", len(res), err)
			}
			if m := e.Metrics().Snapshot(); m["executed"] != int64(b.N) {
				b.Fatalf("counters %v", m)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "intents/s")
		})
	}
}
