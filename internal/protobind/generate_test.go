package protobind

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The generator writes, byte for byte, what protoc-gen-go writes for the repository's own
// protos and the example agents' (the committed bindings scripts/gen_proto.sh makes).
func TestGenerateMatchesTheCommittedBindings(t *testing.T) {
	for _, tc := range []struct{ name, root string }{
		{"runtime", "../../protos"},
		{"support", "../../examples/support/proto"},
		{"quickstart", "../../examples/quickstart/proto"},
		{"devices", "../../examples/devices/proto"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, err := Find(tc.root, []string{tc.root})
			if err != nil {
				t.Fatal(err)
			}
			files, err := Compile(context.Background(), tc.root, names)
			if err != nil {
				t.Fatal(err)
			}
			out, err := Generate(files, Layout{Module: "github.com/beamagents/beamagents"})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != len(names) {
				t.Fatalf("%d files generated for %d sources", len(out), len(names))
			}
			for _, f := range out {
				want, err := os.ReadFile(filepath.Join("../..", filepath.FromSlash(f.Name)))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(f.Content, want) {
					t.Errorf("%s differs from the committed file", f.Name)
				}
			}
		})
	}
}
