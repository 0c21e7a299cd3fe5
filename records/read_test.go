package records_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

func newIntent() *pb.ToolIntent { return &pb.ToolIntent{} }

// ReadMessages reads typed record files and JSON Lines back; a file of another type is
// refused, and so is a line that is not the type's JSON.
func TestReadMessages(t *testing.T) {
	dir := t.TempDir()
	want := []*pb.ToolIntent{{IntentId: "a"}, {IntentId: "b", Seq: 2}}
	data := records.Header(intentType)
	for _, ti := range want {
		b, _ := proto.Marshal(ti)
		data = records.AppendFrame(data, b)
	}
	typed := filepath.Join(dir, "intents.binpb")
	lines := filepath.Join(dir, "intents.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	for path, b := range map[string]string{typed: string(data), lines: "{\"intentId\":\"a\"}\n\n{\"intentId\":\"b\",\"seq\":\"2\"}\n", bad: "{\"intentId\":1}\n"} {
		if err := os.WriteFile(path, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := records.ReadMessages([]string{typed, lines}, newIntent)
	if err != nil || len(got) != 4 {
		t.Fatalf("ReadMessages = %v, %v", got, err)
	}
	for i, m := range got {
		if !proto.Equal(m, want[i%2]) {
			t.Errorf("message %d = %v, want %v", i, m, want[i%2])
		}
	}
	if _, err := records.ReadMessages([]string{typed}, func() *pb.FinalReply { return &pb.FinalReply{} }); err == nil {
		t.Error("read intents as final replies")
	}
	if _, err := records.ReadMessages([]string{bad}, newIntent); err == nil {
		t.Error("read a line that is not an intent's JSON")
	}
	if _, err := records.Glob(filepath.Join(dir, "*.nothing")); err == nil {
		t.Error("Glob of a pattern matching no file gave no error")
	}
}

// ReadFile never panics on a file's bytes, and what it accepts of a typed file is exactly the
// file's records.
func FuzzReadFile(f *testing.F) {
	valid := records.Header(intentType)
	b, _ := proto.Marshal(&pb.ToolIntent{IntentId: "a", Seq: 1})
	valid = records.AppendFrame(valid, b)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add([]byte("not a record file"))
	f.Add([]byte{})
	path := filepath.Join(f.TempDir(), "intents.binpb")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := records.ReadFile(path, intentType)
		if err != nil {
			return
		}
		recs, err := records.Records(path, data, intentType)
		if err != nil || len(recs) != len(got) {
			t.Fatalf("read %d records from a file of %d records (%v)", len(got), len(recs), err)
		}
	})
}
