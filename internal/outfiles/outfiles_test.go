package outfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

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

// Head reads the start of a file, at most what a sniff needs.
func TestHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "intents.binpb")
	data := records.Header((&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName())
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	head, err := outfiles.Head(context.Background(), path)
	if err != nil || len(head) == 0 || len(head) > records.SniffBytes() {
		t.Fatalf("Head: %d bytes, %v", len(head), err)
	}
}
