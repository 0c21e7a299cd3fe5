package backend_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/model"
)

// benchBackends open each backend on loopback or in process: SQLite in a temporary file, a
// real redis-server, a real PostgreSQL server, the Bigtable client library's in-process
// server.
var benchBackends = []struct {
	name string
	open func(b *testing.B) ltm.Store
}{
	{"sqlite", func(b *testing.B) ltm.Store {
		s, err := backend.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "ltm.db"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"redis", func(b *testing.B) ltm.Store {
		s, err := backend.OpenRedis(context.Background(), backend.RedisOptions{URL: "redis://" + testsvc.Redis(b)})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"postgres", func(b *testing.B) ltm.Store {
		s, err := backend.OpenPostgres(context.Background(), backend.PostgresOptions{URL: testsvc.PostgresURL(b)})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"bigtable", func(b *testing.B) ltm.Store {
		return backend.OpenBigtable(bigtableClient(b, bigtableServer(b), "ltm"), "ltm")
	}},
}

// BenchmarkStore measures one Put (a 256-byte value, the next seq of one of 64 keys) and one
// Get per backend, sequentially from one goroutine.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	value := make([]byte, 256)
	entity := []byte("customer-1")
	for _, be := range benchBackends {
		s := be.open(b)
		b.Cleanup(func() { s.Close() })
		var seq int64 // across runs of the sub-benchmark (-count), which share the store
		b.Run(be.name+"/Put", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				seq++
				e := ltm.Entry{Entity: entity, Namespace: "facts", Key: fmt.Sprintf("k%02d", i%64), Value: value, Seq: seq}
				if err := s.Put(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(be.name+"/Get", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, ok, err := s.Get(ctx, entity, "facts", fmt.Sprintf("k%02d", i%64)); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkHandlerActivation: a handler activation that recalls one long-term entry and
// remembers one (both journaled) before its reply, against the same handler replying
// without them, interleaved in one loop on one key per backend; ltm/none is the ratio of
// their times.
func BenchmarkHandlerActivation(b *testing.B) {
	ctx := context.Background()
	none := handlerAgent(b, func(hc *agent.Context, tr agent.Trigger) error {
		return hc.Reply("noted " + string(tr.Event))
	})
	withLTM := handlerAgent(b, func(hc *agent.Context, tr agent.Trigger) error {
		if _, _, err := hc.Recall("prefs", "tone"); err != nil {
			return err
		}
		if err := hc.Remember("prefs", "tone", tr.Event); err != nil {
			return err
		}
		return hc.Reply("noted " + string(tr.Event))
	})
	for _, be := range benchBackends {
		b.Run(be.name, func(b *testing.B) {
			s := be.open(b)
			b.Cleanup(func() { s.Close() })
			deps := host.Deps{AllowUnsigned: true, LongTermMemory: s}
			stNone, stLTM := host.MapStore{}, host.MapStore{}
			var tNone, tLTM time.Duration
			b.ReportAllocs()
			for i := int64(0); b.Loop(); i++ {
				env := &pb.AgentEnvelope{EntityKey: []byte("customer-1"), EventTimeMs: 1_000 + i,
					Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: fmt.Appendf(nil, "event %d", i)}}
				t0 := time.Now()
				activate(b, ctx, none, stNone, env, deps)
				t1 := time.Now()
				activate(b, ctx, withLTM, stLTM, env, deps)
				tLTM += time.Since(t1)
				tNone += t1.Sub(t0)
			}
			b.ReportMetric(float64(tNone.Nanoseconds())/float64(b.N), "none-ns/op")
			b.ReportMetric(float64(tLTM.Nanoseconds())/float64(b.N), "ltm-ns/op")
			b.ReportMetric(float64(tLTM)/float64(tNone), "ltm/none")
		})
	}
}

func handlerAgent(b *testing.B, h agent.Handler) *agent.Agent {
	a, err := agent.New(agent.Definition{Name: "ltm_bench", Handler: h, Model: &model.Scripted{}})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// activate runs one activation to its final reply and commits it.
func activate(b *testing.B, ctx context.Context, a *agent.Agent, st host.MapStore, env *pb.AgentEnvelope, deps host.Deps) {
	res, err := host.Activate(ctx, a, st, env, deps)
	if err != nil || len(res.Finals) != 1 {
		b.Fatalf("activation: %v (%d dead letters)", err, len(res.DeadLetters))
	}
	st.Apply(res)
}
