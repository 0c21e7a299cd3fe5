package drive_test

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// keyRun is what one key's run emitted, decoded.
type keyRun struct {
	intents []*pb.ToolIntent
	snaps   []*pb.StateSnapshot
	rawSnap [][]byte
	finals  int
	dead    []string
}

func runKey(t *testing.T, d *drive.Driver, key []byte, values ...[]byte) keyRun {
	t.Helper()
	var r keyRun
	d.Run(context.Background(), key, values, func(kind int64, b []byte) {
		switch kind {
		case records.OutIntent:
			ti := &pb.ToolIntent{}
			if err := proto.Unmarshal(b, ti); err != nil {
				t.Fatal(err)
			}
			r.intents = append(r.intents, ti)
		case records.OutSnapshot:
			s := &pb.StateSnapshot{}
			if err := proto.Unmarshal(b, s); err != nil {
				t.Fatal(err)
			}
			r.snaps, r.rawSnap = append(r.snaps, s), append(r.rawSnap, b)
		case records.OutFinal:
			r.finals++
		case records.OutDeadLetter:
			d := &pb.ActivationErrorRecord{}
			if err := proto.Unmarshal(b, d); err != nil {
				t.Fatal(err)
			}
			r.dead = append(r.dead, d.GetReason())
		}
	})
	return r
}

func envelope(t *testing.T, env *pb.AgentEnvelope) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A key still waiting on a tool result when a bounded input ends is parked: one snapshot with
// the parked request id, holding the continuation and the pending intent, no escalation, no
// dead letter; a deadline the input's own event time passes still escalates and fails
// closed, and without Park every deadline does (the fail-closed behaviour). The parked
// snapshot restored with the tool result resumes the key to its reply; restored with nothing
// else it parks again, byte for byte.
func TestParkAtEndOfInput(t *testing.T) {
	const t0 = int64(1767225601000)
	key := []byte("customer-2")
	ask := envelope(t, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: t0,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("Where is my order A-1001?")}})
	for _, tc := range []struct {
		name       string
		park       bool
		endMs      int64
		escalated  int
		dead       []string
		wantParked bool
	}{
		{name: "parked at the end", park: true, endMs: t0, wantParked: true},
		{name: "end after the last envelope", park: true, endMs: t0 + 60_000, wantParked: true},
		{name: "deadline within the input", park: true, endMs: t0 + 3_600_000, escalated: 2, dead: []string{"activation_timeout"}},
		{name: "fail closed", park: false, endMs: t0, escalated: 2, dead: []string{"activation_timeout"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t, support.ModelScript, 1000)
			d.Park, d.EndMs = tc.park, tc.endMs
			r := runKey(t, d, key, ask)
			escalated := 0
			for _, ti := range r.intents {
				if ti.GetAttempt() > 0 {
					escalated++
				}
			}
			if escalated != tc.escalated || len(r.intents) != 1+tc.escalated || !equal(r.dead, tc.dead) {
				t.Fatalf("%d intents (%d escalations), dead letters %v; want %d escalations, dead letters %v", len(r.intents), escalated, r.dead, tc.escalated, tc.dead)
			}
			if !tc.wantParked {
				if len(r.snaps) != 0 {
					t.Fatalf("%d snapshots, want none", len(r.snaps))
				}
				return
			}
			if len(r.snaps) != 1 {
				t.Fatalf("%d snapshots, want 1 parked", len(r.snaps))
			}
			snap := r.snaps[0]
			if snap.GetRequestId() != drive.ParkedRequestID || snap.GetSnapshotAtMs() != tc.endMs || snap.GetContinuation() == nil ||
				len(snap.GetPending()) != 1 || snap.GetPending()[0].GetIntentId() != r.intents[0].GetIntentId() {
				t.Fatalf("parked snapshot %v", snap)
			}

			// Restored with nothing else, it parks again, byte for byte.
			again := runKey(t, d, key, drive.RestoreValue(snap))
			if len(again.intents) != 0 || len(again.dead) != 0 || len(again.rawSnap) != 1 || !bytes.Equal(again.rawSnap[0], r.rawSnap[0]) {
				t.Fatalf("parked again: %d intents, dead %v, snapshots %v", len(again.intents), again.dead, again.snaps)
			}

			// Restored with the tool result, it resumes to its reply.
			id := r.intents[0].GetIntentId()
			result := envelope(t, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: t0 + 60_000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
				IntentId: id, EntityKey: key, Status: pb.ToolResult_OK, Payload: []byte(`{"status":"shipped","eta":"Thursday"}`), CompletedAtMs: t0 + 59_000}}})
			d.EndMs = t0 + 60_000
			resumed := runKey(t, d, key, drive.RestoreValue(snap), result)
			if resumed.finals != 1 || len(resumed.dead) != 0 || len(resumed.intents) != 0 || len(resumed.snaps) != 0 {
				t.Fatalf("resumed: %d finals, dead %v, %d intents, %d snapshots", resumed.finals, resumed.dead, len(resumed.intents), len(resumed.snaps))
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
