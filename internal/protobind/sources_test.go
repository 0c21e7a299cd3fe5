package protobind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func tree(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("syntax = \"proto3\";\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFind(t *testing.T) {
	dir := tree(t, "proto/a/v1/a.proto", "proto/b/b.proto", "proto/.hidden/h.proto", "proto/notes.txt", "proto/docs/README", "other/o.proto")
	proto := filepath.Join(dir, "proto")
	for _, tc := range []struct {
		name string
		args []string
		want []string
		err  error
	}{
		{"a directory, hidden ones skipped", []string{proto}, []string{"a/v1/a.proto", "b/b.proto"}, nil},
		{"a file and its directory, once", []string{filepath.Join(proto, "b", "b.proto"), filepath.Join(proto, "b")}, []string{"b/b.proto"}, nil},
		{"outside the import root", []string{filepath.Join(dir, "other")}, nil, ErrSource},
		{"missing", []string{filepath.Join(proto, "nope")}, nil, ErrSource},
		{"not a .proto file", []string{filepath.Join(proto, "notes.txt")}, nil, ErrSource},
		{"no .proto file", []string{filepath.Join(proto, "docs")}, nil, ErrSource},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Find(proto, tc.args)
			if tc.err != nil && !errors.Is(err, tc.err) || tc.err == nil && err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// A source that does not compile is a CodeCompile error naming the file and position; a
// compiled file without go_package is refused by the generator with CodeGenerate.
func TestErrorCodes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.proto"), []byte("syntax = \"proto3\";\nmessage {\n"), 0o644)
	_, err := Compile(context.Background(), dir, []string{"bad.proto"})
	var pe *Error
	if !errors.Is(err, ErrCompile) || !errors.As(err, &pe) || pe.Where != filepath.Join(dir, "bad.proto")+":2:9" {
		t.Fatalf("%#v", err)
	}
	files, err := Compile(context.Background(), tree(t, "x.proto"), []string{"x.proto"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(files, Layout{}); !errors.Is(err, ErrGenerate) || errors.Is(err, ErrCompile) {
		t.Fatalf("%v", err)
	}
}
