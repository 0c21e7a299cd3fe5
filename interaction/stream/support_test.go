package stream_test

import (
	"flag"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bufbuild/protocompile/linker"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
	"github.com/beamagents/beamagents/internal/testkit/goldenfile"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current behaviour")

var interactionTestdata = filepath.Join("..", "testdata")

var (
	compileOnce sync.Once
	compiled    linker.Files
	grammars    sync.Map // root type id -> *stream.Grammar
)

func testFiles(tb testing.TB) linker.Files {
	tb.Helper()
	compileOnce.Do(func() {
		compiled = prototest.CompileDir(tb, filepath.Join(interactionTestdata, "proto"), "shop.proto", "edges.proto")
	})
	if compiled == nil {
		tb.Fatal("the test schemas did not compile")
	}
	return compiled
}

// grammar compiles (once) the schema and the grammar of the given root.
func grammar(tb testing.TB, root string) *stream.Grammar {
	tb.Helper()
	if g, ok := grammars.Load(root); ok {
		return g.(*stream.Grammar)
	}
	s, err := interaction.CompileFileSet(prototest.FileSet(testFiles(tb)), root)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := stream.Compile(s)
	if err != nil {
		tb.Fatal(err)
	}
	grammars.Store(root, g)
	return g
}

func loadCorpus(tb testing.TB) []corpus.Doc {
	tb.Helper()
	docs, err := corpus.Load(filepath.Join(interactionTestdata, "docs"), func(root string) (string, error) {
		return grammar(tb, root).Schema().Digest(), nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return docs
}

// feed pushes doc in the given chunk sizes (cycling; the last chunk takes the rest), stops at
// the first terminal outcome, and finishes.
func feed(g *stream.Grammar, doc []byte, sizes ...int) stream.Outcome {
	d := g.NewDecoder()
	for i, k := 0, 0; i < len(doc); k++ {
		n := len(doc) - i
		if len(sizes) > 0 {
			n = min(n, max(1, sizes[k%len(sizes)]))
		}
		if o := d.Push(doc[i : i+n]); o.State() != stream.Incomplete {
			return o
		}
		i += n
	}
	return d.Finish()
}

// split pushes doc[:at] and doc[at:], then finishes.
func split(g *stream.Grammar, doc []byte, at int) stream.Outcome {
	d := g.NewDecoder()
	if o := d.Push(doc[:at]); o.State() != stream.Incomplete {
		return o
	}
	if o := d.Push(doc[at:]); o.State() != stream.Incomplete {
		return o
	}
	return d.Finish()
}

// describe renders an outcome fully, for comparing outcomes of different chunkings.
func describe(o stream.Outcome) string {
	switch o.State() {
	case stream.Accepted:
		return "accepted " + string(o.Value().Canonical())
	case stream.Refused:
		return o.Refusal().Error()
	}
	return "incomplete"
}

func golden(tb testing.TB, name string, got []byte) {
	tb.Helper()
	goldenfile.Check(tb, filepath.Join("testdata", name), got, *update)
}
