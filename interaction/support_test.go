package interaction_test

import (
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/goldenfile"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current behaviour")

var protoFiles = []string{"shop.proto", "edges.proto", "refused.proto", "refused_proto2.proto"}

var (
	compileOnce sync.Once
	compiled    linker.Files
)

// testFiles compiles testdata/proto once per test binary.
func testFiles(tb testing.TB) linker.Files {
	tb.Helper()
	compileOnce.Do(func() { compiled = prototest.CompileDir(tb, filepath.Join("testdata", "proto"), protoFiles...) })
	if compiled == nil {
		tb.Fatal("testdata/proto did not compile")
	}
	return compiled
}

func testFileSet(tb testing.TB) *descriptorpb.FileDescriptorSet {
	return prototest.FileSet(testFiles(tb))
}

var schemas sync.Map // root type id -> *interaction.Schema

// mustSchema compiles (once) the admitted root with the given type id.
func mustSchema(tb testing.TB, root string) *interaction.Schema {
	tb.Helper()
	if s, ok := schemas.Load(root); ok {
		return s.(*interaction.Schema)
	}
	s, err := interaction.CompileFileSet(testFileSet(tb), root)
	if err != nil {
		tb.Fatalf("compile %s: %v", root, err)
	}
	schemas.Store(root, s)
	return s
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	goldenfile.Check(tb, filepath.Join("testdata", name), got, *update)
}

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
