package outfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/outfiles"
	"github.com/beamagents/beamagents/records"
)

// List and Remove touch exactly the files of the outputs named: never a folder's others.
func TestListAndRemove(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"intents.binpb", "intents-00001-of-00002.jsonl", ".intents-x.partial", "intents.txt", "traces.jsonl", "notes.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	globs := outfiles.Globs("intents")
	got, err := outfiles.List(ctx, dir, globs)
	if want := []string{".intents-x.partial", "intents-00001-of-00002.jsonl", "intents.binpb"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %q, %v; want %q", got, err, want)
	}
	if err := outfiles.Remove(ctx, dir, globs); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if want := []string{"intents.txt", "notes.md", "traces.jsonl"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("left %q, want %q", names, want)
	}
	if got, want := outfiles.Join("gs://b/out/", "x.jsonl"), "gs://b/out/x.jsonl"; got != want {
		t.Errorf("Join = %q, want %q", got, want)
	}
}

// Read reads a typed record file back; a file of another type is refused.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	want := []*pb.ToolIntent{{IntentId: "a"}, {IntentId: "b", Seq: 2}}
	data := records.Header((&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName())
	for _, ti := range want {
		b, _ := proto.Marshal(ti)
		data = records.AppendFrame(data, b)
	}
	path := filepath.Join(dir, "intents.binpb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := outfiles.Read(path, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if err != nil || len(got) != 2 || !proto.Equal(got[0], want[0]) || !proto.Equal(got[1], want[1]) {
		t.Fatalf("Read = %v, %v", got, err)
	}
	if _, err := outfiles.Read(path, func() *pb.FinalReply { return &pb.FinalReply{} }); err == nil {
		t.Fatal("read intents as final replies")
	}
	head, err := outfiles.Head(context.Background(), path)
	if err != nil || len(head) == 0 || len(head) > records.SniffBytes() {
		t.Fatalf("Head: %d bytes, %v", len(head), err)
	}
}

// Read never panics on a file's bytes, and what it accepts is exactly the file's records.
func FuzzRead(f *testing.F) {
	valid := records.Header((&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName())
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
		got, err := outfiles.Read(path, func() *pb.ToolIntent { return &pb.ToolIntent{} })
		if err != nil {
			return
		}
		recs, err := records.Records(path, data, (&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName())
		if err != nil || len(recs) != len(got) {
			t.Fatalf("read %d messages from a file of %d records (%v)", len(got), len(recs), err)
		}
	})
}
