package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

// InputEnd is the latest event time of the input's envelopes, JSON Lines or typed binary,
// records that do not decode passed over, and of the snapshots restored: all of --restore's,
// only the parked ones of --resume.
func TestInputEnd(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(ms int64) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: ms, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")}}
	}
	typed := func(msgs ...proto.Message) []byte {
		b := records.Header(msgs[0].ProtoReflect().Descriptor().FullName())
		for _, m := range msgs {
			rec, err := proto.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			b = records.AppendFrame(b, rec)
		}
		return b
	}
	jsonl := write("in.jsonl", []byte(`{"entityKey":"aw==","eventTimeMs":"2000","externalEvent":"eA=="}
not an envelope, passed over
{"entityKey":"aw==","eventTimeMs":"5000","externalEvent":"eA=="}
{"entityKey":"aw==","eventTimeMs":"9000"}
`))
	bin := write("in.binpb", typed(env(3000), env(7000)))
	snaps := write("snapshots.binpb", typed(
		&pb.StateSnapshot{EntityKey: []byte("k"), SnapshotAtMs: 6000, RequestId: drive.ParkedRequestID},
		&pb.StateSnapshot{EntityKey: []byte("k"), SnapshotAtMs: 8000, RequestId: "an-export"}))
	for _, tc := range []struct {
		name string
		o    pipeline.Options
		want int64
	}{
		{"json lines", pipeline.Options{Input: jsonl}, 5000}, // the envelope without a payload does not run
		{"typed binary", pipeline.Options{Input: bin, InputFormat: transforms.Binary}, 7000},
		{"resume counts the parked snapshots", pipeline.Options{Input: jsonl, Resume: snaps}, 6000},
		{"restore counts every snapshot", pipeline.Options{Input: jsonl, Restore: snaps}, 8000},
		{"no envelope", pipeline.Options{Input: write("empty.jsonl", nil)}, pipeline.NoInputEnd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pipeline.InputEnd(context.Background(), tc.o)
			if err != nil || got != tc.want {
				t.Fatalf("InputEnd = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}
