package negotiate_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile/linker"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/goldenfile"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current behaviour")

var (
	compileOnce sync.Once
	compiled    linker.Files
	schemas     sync.Map // message full name -> *interaction.Schema
)

// testFiles compiles testdata/proto once per test binary.
func testFiles(tb testing.TB) linker.Files {
	tb.Helper()
	compileOnce.Do(func() {
		compiled = prototest.CompileDir(tb, filepath.Join("testdata", "proto"), "pairs.proto", "proposal.proto")
	})
	if compiled == nil {
		tb.Fatal("testdata/proto did not compile")
	}
	return compiled
}

// schemaOf compiles (once) the schema rooted at the message with the given full name; a
// short name is looked up in pairs.v1.
func schemaOf(tb testing.TB, name string) *interaction.Schema {
	tb.Helper()
	if !bytes.ContainsRune([]byte(name), '.') {
		name = "pairs.v1." + name
	}
	if s, ok := schemas.Load(name); ok {
		return s.(*interaction.Schema)
	}
	s, err := interaction.Compile(prototest.Message(tb, testFiles(tb), name))
	if err != nil {
		tb.Fatalf("compile %s: %v", name, err)
	}
	schemas.Store(name, s)
	return s
}

func proposalSchema(tb testing.TB) *interaction.Schema { return schemaOf(tb, "proposal.v1.Proposal") }

// golden compares got with testdata/name, rewriting it under -update.
func golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	goldenfile.Check(tb, filepath.Join("testdata", name), got, *update)
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
