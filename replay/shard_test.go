package replay_test

import (
	"testing"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/shard"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/replay"
)

// Sharded keys inputs as a sharded run does: events on their sub-keys, answers where they
// were addressed, arrival order kept within each key.
func TestSharded(t *testing.T) {
	event := func(i int64) []byte {
		return drive.Marshal(&pb.AgentEnvelope{EntityKey: []byte("dev"), EventTimeMs: i,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte{byte(i)}}})
	}
	answer := drive.Marshal(&pb.AgentEnvelope{EntityKey: []byte("dev#s1"), EventTimeMs: 9,
		Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: "i"}}})
	inputs := []replay.Input{{Entity: []byte("dev"), Values: [][]byte{event(1), event(2), event(3), event(4)}},
		{Entity: []byte("dev#s1"), Values: [][]byte{answer}}}
	if got := replay.Sharded(1, inputs); len(got) != 2 || string(got[0].Entity) != "dev" {
		t.Fatalf("unsharded: %v", got)
	}
	values := 0
	for _, in := range replay.Sharded(2, inputs) {
		if _, _, ok := shard.Split(in.Entity, 2); !ok {
			t.Errorf("key %q is not a sub-key", in.Entity)
		}
		last := int64(-1)
		for _, v := range in.Values {
			x := drive.DecodeInput(in.Entity, v)
			if string(x.Env.GetEntityKey()) != string(in.Entity) || x.Env.GetEventTimeMs() < last {
				t.Errorf("key %q holds %v out of place", in.Entity, x.Env)
			}
			last = x.Env.GetEventTimeMs()
			values++
		}
	}
	if values != 5 {
		t.Fatalf("%d values, want 5", values)
	}
}
