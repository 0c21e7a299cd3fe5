package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
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

// A key restored from a snapshot is idle from the snapshot's time: the restore arms its TTL,
// which flushes the memory with no further input; a snapshot without a time arms none.
func TestRestoredKeyExpires(t *testing.T) {
	ctx := context.Background()
	handler := func(hc *agent.Context, tr agent.Trigger) error { return hc.Put("last", tr.Event) }
	a, err := agent.New(agent.Definition{Name: "flush", Handler: handler, FlushOnExpiry: "history", Limits: agent.Limits{IdleTTLMs: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	deps := host.Deps{AllowUnsigned: true}
	st := host.MapStore{}
	for _, env := range []*pb.AgentEnvelope{ext(0, "first"), ext(500, "second"), {EntityKey: []byte(entity), EventTimeMs: 800,
		Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{}}}} {
		res, err := host.Activate(ctx, a, st, env, deps)
		if err != nil {
			t.Fatal(err)
		}
		st.Apply(res)
		if len(res.Snapshots) == 1 {
			deps.LongTermMemory = restoreAndExpire(t, a, res.Snapshots[0], 1800)
		}
	}
	e, found, err := deps.LongTermMemory.Get(ctx, []byte(entity), "history", "last")
	if err != nil || !found || string(e.Value) != "second" || e.Seq != 2 {
		t.Fatalf("flushed entry %+v %v %v, want \"second\" at seq 2", e, found, err)
	}
}

// restoreAndExpire restores snap into a fresh key, checks the restore arms the TTL at ttlAt
// (and a copy of snap without a time arms none), fires it and returns the store flushed to.
func restoreAndExpire(t *testing.T, a *agent.Agent, snap *pb.StateSnapshot, ttlAt int64) ltm.Store {
	t.Helper()
	ctx := context.Background()
	for _, tc := range []struct {
		atMs  int64
		timer []host.TimerOp
	}{
		{snap.GetSnapshotAtMs(), []host.TimerOp{{Tag: host.TagTTL, Set: true, AtMs: ttlAt}}},
		{0, nil},
	} {
		s := proto.CloneOf(snap)
		s.SnapshotAtMs = tc.atMs
		res, err := host.Restore(ctx, a, host.MapStore{}, s)
		if err != nil || !slices.Equal(res.Timers, tc.timer) {
			t.Fatalf("restore of a snapshot at %d: %v, timers %v, want %v", tc.atMs, err, res.Timers, tc.timer)
		}
	}
	store, err := backend.OpenSQLite(ctx, filepath.Join(t.TempDir(), "ltm.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	st := host.MapStore{}
	res, _ := host.Restore(ctx, a, st, snap)
	st.Apply(res)
	if res, err := host.Fire(ctx, a, st, []byte(entity), host.TagTTL, ttlAt, host.Deps{LongTermMemory: store}); err != nil || len(res.Writes) == 0 {
		t.Fatalf("the restored key's expiry: %v, writes %v", err, res.Writes)
	}
	return store
}
