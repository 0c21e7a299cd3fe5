package drive_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/shard"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func envelopeBytes(key string, env *pb.AgentEnvelope) []byte {
	env.EntityKey = []byte(key)
	return drive.Marshal(env)
}

// Route moves only a sharded agent's external events, each to the sub-key of its bytes'
// shard, with the envelope's entity key rewritten to it.
func TestRoute(t *testing.T) {
	event := envelopeBytes("dev", &pb.AgentEnvelope{EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("ping")}})
	sub := shard.Key([]byte("dev"), shard.Of(event, 8))
	for _, tc := range []struct {
		name    string
		n       int
		key     string
		value   []byte
		wantKey string
		moved   bool
	}{
		{"external event", 8, "dev", event, string(sub), true},
		{"unsharded", 1, "dev", event, "dev", false},
		{"zero shards", 0, "dev", event, "dev", false},
		{"already a sub-key", 8, "dev#s5", envelopeBytes("dev#s5", &pb.AgentEnvelope{EventTimeMs: 1, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}}), "dev#s5", false},
		{"tool result", 8, "dev#s2", envelopeBytes("dev#s2", &pb.AgentEnvelope{EventTimeMs: 1, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: "i"}}}), "dev#s2", false},
		{"approval", 8, "dev#s2", envelopeBytes("dev#s2", &pb.AgentEnvelope{EventTimeMs: 1, Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{IntentId: "i"}}}), "dev#s2", false},
		{"signal", 8, "dev", envelopeBytes("dev", &pb.AgentEnvelope{EventTimeMs: 1, Payload: &pb.AgentEnvelope_Signal_{Signal: &pb.AgentEnvelope_Signal{Name: "go"}}}), "dev", false},
		{"export request", 8, "dev", envelopeBytes("dev", &pb.AgentEnvelope{EventTimeMs: 1, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "r"}}}), "dev", false},
		{"restore", 8, "dev", drive.RestoreValue(&pb.StateSnapshot{EntityKey: []byte("dev")}), "dev", false},
		{"undecodable", 8, "dev", []byte{0xff, 0xff}, "dev", false},
		{"empty", 8, "dev", nil, "dev", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, value := drive.Route(tc.n, []byte(tc.key), tc.value)
			if string(key) != tc.wantKey {
				t.Fatalf("key %q, want %q", key, tc.wantKey)
			}
			if !tc.moved {
				if !bytes.Equal(value, tc.value) {
					t.Fatalf("value changed")
				}
				return
			}
			env := &pb.AgentEnvelope{}
			if err := proto.Unmarshal(value, env); err != nil || !bytes.Equal(env.GetEntityKey(), key) || string(env.GetExternalEvent()) != "ping" {
				t.Fatalf("routed envelope %v, %v", env, err)
			}
			// Routing is idempotent: a routed event stays where it went.
			if k2, v2 := drive.Route(tc.n, key, value); !bytes.Equal(k2, key) || !bytes.Equal(v2, value) {
				t.Fatalf("routed again to %q", k2)
			}
		})
	}
}

// Route never panics, and what it routes it leaves where it is when routed again.
func FuzzRoute(f *testing.F) {
	f.Add(8, []byte("dev"), envelopeBytes("dev", &pb.AgentEnvelope{EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("ping")}}))
	f.Add(64, []byte("dev#s3"), []byte{0x0a, 0x01})
	f.Add(2, []byte(""), []byte{0x00, 0x01})
	f.Fuzz(func(t *testing.T, n int, key, value []byte) {
		k, v := drive.Route(n, key, value)
		if k2, v2 := drive.Route(n, k, v); !bytes.Equal(k2, k) || !bytes.Equal(v2, v) {
			t.Fatalf("Route(%d, %q) moved %q again to %q", n, key, k, k2)
		}
	})
}
