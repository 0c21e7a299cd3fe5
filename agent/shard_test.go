package agent_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/agent/shard"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

// A sharded agent may not declare state one sub-key cannot hold for its entity.
func TestShardsRefusedAtBuild(t *testing.T) {
	reply := func(hc *agent.Context, _ agent.Trigger) error { return hc.Reply("ok") }
	for _, tc := range []struct {
		name   string
		def    agent.Definition
		refuse bool
	}{
		{"sharded", agent.Definition{Shards: 64}, false},
		{"one shard keeps memory", agent.Definition{Shards: 1, FlushOnExpiry: "ns", Limits: agent.Limits{Memory: statecodec.MemoryOptions{MaxEntries: 4}}}, false},
		{"memory bounds", agent.Definition{Shards: 2, Limits: agent.Limits{Memory: statecodec.MemoryOptions{MaxEntries: 4}}}, true},
		{"memory bytes", agent.Definition{Shards: 2, Limits: agent.Limits{Memory: statecodec.MemoryOptions{MaxValueBytes: 1024}}}, true},
		{"flush at expiry", agent.Definition{Shards: 2, FlushOnExpiry: "ns"}, true},
		{"negative", agent.Definition{Shards: -1}, true},
		{"too many", agent.Definition{Shards: shard.Max + 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := tc.def
			def.Name, def.Handler, def.Model = "hot", reply, &model.Scripted{}
			a, err := agent.New(def)
			if tc.refuse != (err != nil) || (err != nil && !errors.Is(err, agent.ErrDefinition)) {
				t.Fatalf("New: %v, want refused %v", err, tc.refuse)
			}
			if err == nil && a.Shards() != max(def.Shards, 1) {
				t.Fatalf("Shards() = %d", a.Shards())
			}
		})
	}
}

// A sharded activation that uses memory or awaits a signal fails as shard_refused and
// commits nothing; the same handler unsharded runs. Tool calls work: the intent names the
// sub-key, and a result addressed to it resumes the activation.
func TestShardRefusedAtRun(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		handler agent.Handler
	}{
		{"get", func(hc *agent.Context, _ agent.Trigger) error { _, _, err := hc.Get("k"); return err }},
		{"put", func(hc *agent.Context, _ agent.Trigger) error { return hc.Put("k", []byte("v")) }},
		{"delete", func(hc *agent.Context, _ agent.Trigger) error { return hc.Delete("k") }},
		{"append", func(hc *agent.Context, _ agent.Trigger) error { return hc.Append("r", []byte("v"), 3) }},
		{"ring", func(hc *agent.Context, _ agent.Trigger) error { _, err := hc.Ring("r"); return err }},
		{"recall", func(hc *agent.Context, _ agent.Trigger) error { _, _, err := hc.Recall("n", "k"); return err }},
		{"remember", func(hc *agent.Context, _ agent.Trigger) error { return hc.Remember("n", "k", []byte("v")) }},
		{"await", func(hc *agent.Context, _ agent.Trigger) error { _, err := hc.Await("go"); return err }},
		{"await by", func(hc *agent.Context, _ agent.Trigger) error { _, _, err := hc.AwaitBy("go", 5000); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(agent.Definition{Name: "hot", Handler: tc.handler, Model: &model.Scripted{}, Shards: 8})
			if err != nil {
				t.Fatal(err)
			}
			state := host.MapStore{}
			res, err := host.Activate(ctx, a, state, external("dev#s3", "x"), host.Deps{AllowUnsigned: true})
			if !errors.Is(err, &agent.Error{Reason: records.ReasonShardRefused}) {
				t.Fatalf("Activate: %v, want shard_refused", err)
			}
			if len(res.DeadLetters) != 1 || res.DeadLetters[0].GetReason() != string(records.ReasonShardRefused) ||
				len(res.Writes) != 0 || len(res.Intents) != 0 || len(state) != 0 {
				t.Fatalf("result: %v dead letters, %d writes, %d intents, state %v", res.DeadLetters, len(res.Writes), len(res.Intents), state)
			}
			unsharded, err := agent.New(agent.Definition{Name: "hot", Handler: tc.handler, Model: &model.Scripted{}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := host.Activate(ctx, unsharded, host.MapStore{}, external("dev", "x"), host.Deps{AllowUnsigned: true}); errors.Is(err, &agent.Error{Reason: records.ReasonShardRefused}) {
				t.Fatalf("unsharded Activate: %v", err)
			}
		})
	}
}

func TestShardedToolCall(t *testing.T) {
	ctx := context.Background()
	a, err := agent.New(agent.Definition{Name: "hot", Model: &model.Scripted{}, Shards: 8,
		Handler: func(hc *agent.Context, _ agent.Trigger) error {
			r, err := hc.Tool("audit", `{}`)
			if err != nil {
				return err
			}
			return hc.Reply(string(r.GetPayload()))
		}})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte("dev#s3")
	state := host.MapStore{}
	res, err := host.Activate(ctx, a, state, external(string(key), "x"), host.Deps{AllowUnsigned: true})
	if err != nil || len(res.Intents) != 1 || !bytes.Equal(res.Intents[0].GetEntityKey(), key) {
		t.Fatalf("Activate: %v, intents %v", err, res.Intents)
	}
	state.Apply(res)
	ti := res.Intents[0]
	res, err = host.Activate(ctx, a, state, &pb.AgentEnvelope{EntityKey: ti.GetEntityKey(), EventTimeMs: 2000,
		Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: ti.GetIntentId(), EntityKey: ti.GetEntityKey(),
			Status: pb.ToolResult_OK, Payload: []byte("done")}}}, host.Deps{AllowUnsigned: true})
	if err != nil || len(res.Finals) != 1 || !bytes.Equal(res.Finals[0].GetEntityKey(), key) {
		t.Fatalf("resume: %v, finals %v", err, res.Finals)
	}
}

// A sub-key's tenant is its entity's.
func TestShardTenant(t *testing.T) {
	a, err := agent.New(agent.Definition{Name: "hot", Handler: func(*agent.Context, agent.Trigger) error { return nil },
		Model: &model.Scripted{}, Shards: 4, Tenant: func(key string) string { return "t:" + key }})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"dev#s3": "t:dev", "dev": "t:dev", "dev#s4": "t:dev#s4"} {
		if got := a.Tenant(key); got != want {
			t.Errorf("Tenant(%q) = %q, want %q", key, got, want)
		}
	}
}

func external(key, event string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(event)}}
}
