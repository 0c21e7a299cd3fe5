package agent_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// The scenarios' "ltm" handler runs without a store: its activation ends in
// memory_store_failed.
func init() {
	testHandlers["ltm"] = func(testing.TB) agent.Handler { return ltmHandler }
}

// ltmHandler recalls the entity's tone, remembers the event as the new one, waits for a tool
// and replies with what it recalled: the resumed run sees the first run's read and does not
// write again.
func ltmHandler(hc *agent.Context, tr agent.Trigger) error {
	old, found, err := hc.Recall("prefs", "tone")
	if err != nil {
		return err
	}
	if err := hc.Remember("prefs", "tone", tr.Event); err != nil {
		return err
	}
	if _, err := hc.Tool("audit", `{}`); err != nil {
		return err
	}
	return hc.Reply(fmt.Sprintf("was %q %v", old, found))
}

func TestHandlerLongTermMemory(t *testing.T) {
	ctx := context.Background()
	s, err := backend.OpenSQLite(ctx, filepath.Join(t.TempDir(), "ltm.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	a, err := agent.New(agent.Definition{Name: "ltm", Handler: ltmHandler, Model: &model.Scripted{}})
	if err != nil {
		t.Fatal(err)
	}
	deps := host.Deps{AllowUnsigned: true, LongTermMemory: s}
	key := []byte("customer-1")
	state := host.MapStore{}
	step := func(env *pb.AgentEnvelope) *host.Result {
		t.Helper()
		env.EntityKey = key
		res, err := host.Activate(ctx, a, state, env, deps)
		if err != nil {
			t.Fatal(err)
		}
		state.Apply(res)
		return res
	}
	tone := func() (string, int64) {
		t.Helper()
		e, ok, err := s.Get(ctx, key, "prefs", "tone")
		if err != nil || !ok {
			t.Fatalf("tone: %v %v", ok, err)
		}
		return string(e.Value), e.Seq
	}
	event := func(ms int64, text string) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EventTimeMs: ms, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
	}
	result := func(ms int64, ti *pb.ToolIntent) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EventTimeMs: ms, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
			IntentId: ti.GetIntentId(), Seq: ti.GetSeq(), Status: pb.ToolResult_OK}}}
	}

	// Activation 0 recalls nothing, remembers "formal" at seq 0 and waits for its tool.
	res := step(event(1000, "formal"))
	if v, seq := tone(); v != "formal" || seq != 0 {
		t.Fatalf("after activation 0: %q seq %d", v, seq)
	}
	// Another writer of the same seq changes the entry while the activation waits: the resumed
	// run neither reads it (its recall is journaled) nor writes over it (its write took effect).
	if err := s.Put(ctx, ltm.Entry{Entity: key, Namespace: "prefs", Key: "tone", Value: []byte("tampered"), Seq: 0}); err != nil {
		t.Fatal(err)
	}
	res = step(result(2000, res.Intents[0]))
	if got := string(res.Finals[0].GetMessage()); got != `was "" false` {
		t.Fatalf("resumed reply %q", got)
	}
	if v, _ := tone(); v != "tampered" {
		t.Fatalf("the resumed run wrote again: %q", v)
	}
	// Activation 1 recalls the stored value and remembers at seq 1.
	res = step(event(3000, "casual"))
	res = step(result(4000, res.Intents[0]))
	if got := string(res.Finals[0].GetMessage()); got != `was "tampered" true` {
		t.Fatalf("activation 1 reply %q", got)
	}
	if v, seq := tone(); v != "casual" || seq != 1 {
		t.Fatalf("after activation 1: %q seq %d", v, seq)
	}
	// A later activation's write stands: activation 2's stale write is no failure.
	if err := s.Put(ctx, ltm.Entry{Entity: key, Namespace: "prefs", Key: "tone", Value: []byte("later"), Seq: 9}); err != nil {
		t.Fatal(err)
	}
	res = step(event(5000, "stale"))
	step(result(6000, res.Intents[0]))
	if v, seq := tone(); v != "later" || seq != 9 {
		t.Fatalf("a stale write landed: %q seq %d", v, seq)
	}
}

// Without a store, or with an entry the store refuses, the activation fails as
// memory_store_failed and commits nothing.
func TestHandlerLongTermMemoryFails(t *testing.T) {
	ctx := context.Background()
	s, err := backend.OpenSQLite(ctx, filepath.Join(t.TempDir(), "ltm.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, tc := range []struct {
		name    string
		store   ltm.Store
		handler agent.Handler
		cause   error
	}{
		{"no store", nil, ltmHandler, nil},
		{"empty namespace", s, func(hc *agent.Context, _ agent.Trigger) error { return hc.Remember("", "k", nil) }, ltm.ErrInvalid},
		{"value over the bound", s, func(hc *agent.Context, _ agent.Trigger) error {
			return hc.Remember("n", "k", make([]byte, ltm.MaxValueBytes+1))
		}, ltm.ErrBounds},
		{"key over the bound", s, func(hc *agent.Context, _ agent.Trigger) error {
			_, _, err := hc.Recall("n", string(make([]byte, ltm.MaxKeyBytes+1)))
			return err
		}, ltm.ErrBounds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(agent.Definition{Name: "ltm", Handler: tc.handler, Model: &model.Scripted{}})
			if err != nil {
				t.Fatal(err)
			}
			state := host.MapStore{}
			res, err := host.Activate(ctx, a, state, &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1000,
				Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}}, host.Deps{AllowUnsigned: true, LongTermMemory: tc.store})
			if !errors.Is(err, &agent.Error{Reason: records.ReasonMemoryStoreFailed}) {
				t.Fatalf("Activate: %v, want memory_store_failed", err)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Fatalf("Activate: %v, want the cause %v", err, tc.cause)
			}
			if len(res.DeadLetters) != 1 || len(res.Writes) != 0 || len(res.Intents) != 0 {
				t.Fatalf("result: %d dead letters, %d writes, %d intents", len(res.DeadLetters), len(res.Writes), len(res.Intents))
			}
		})
	}
}
