package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// An agent with FlushOnExpiry writes an expiring key's memory to the long-term store before
// clearing it, stamped with the key's seq; without a store, or with one that fails, the
// firing dead-letters as memory_store_failed and commits nothing: the memory stays.
func TestFlushOnExpiry(t *testing.T) {
	ctx := context.Background()
	handler := func(hc *agent.Context, tr agent.Trigger) error {
		if err := hc.Put("last", tr.Event); err != nil {
			return err
		}
		return hc.Reply("ok")
	}
	a, err := agent.New(agent.Definition{Name: "flush", Handler: handler, Model: &model.Scripted{}, FlushOnExpiry: "history",
		Limits: agent.Limits{IdleTTLMs: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if !a.FlushesOnExpiry() {
		t.Fatal("FlushesOnExpiry() = false")
	}
	open := func() ltm.Store {
		s, err := backend.OpenSQLite(ctx, filepath.Join(t.TempDir(), "ltm.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	closed := open()
	closed.Close()
	for _, tc := range []struct {
		name  string
		store ltm.Store
		ok    bool
	}{
		{"store", open(), true},
		{"no store", nil, false},
		{"failing store", closed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps := host.Deps{AllowUnsigned: true, LongTermMemory: tc.store}
			st := host.MapStore{}
			for i, text := range []string{"first", "second"} {
				res, err := host.Activate(ctx, a, st, ext(int64(1000*i), text), deps)
				if err != nil {
					t.Fatal(err)
				}
				st.Apply(res)
			}
			res, err := host.Fire(ctx, a, st, []byte(entity), host.TagTTL, 3000, deps)
			if !tc.ok {
				if !errors.Is(err, &agent.Error{Reason: records.ReasonMemoryStoreFailed}) || len(res.DeadLetters) != 1 || len(res.Writes) != 0 {
					t.Fatalf("Fire: %v, %d dead letters, writes %v; want memory_store_failed and nothing written", err, len(res.DeadLetters), res.Writes)
				}
				return
			}
			if err != nil || len(res.Writes) == 0 {
				t.Fatalf("Fire: %v, writes %v", err, res.Writes)
			}
			e, found, err := tc.store.Get(ctx, []byte(entity), "history", "last")
			if err != nil || !found || string(e.Value) != "second" || e.Seq != 2 {
				t.Fatalf("flushed entry %+v %v %v, want \"second\" at seq 2", e, found, err)
			}
		})
	}
	if _, err := agent.New(agent.Definition{Name: "bad", Handler: handler, FlushOnExpiry: "\xff"}); !errors.Is(err, agent.ErrDefinition) {
		t.Errorf("a FlushOnExpiry namespace that is not UTF-8: %v, want ErrDefinition", err)
	}
}
