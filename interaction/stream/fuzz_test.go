package stream_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

var fuzzRoots = []string{"shop.proposal", "edges.root"}

// FuzzAgreement feeds arbitrary bytes in arbitrary chunks: the stream accepts exactly when
// the whole decoder admits, with the identical value, refuses otherwise, and gives the same
// outcome as feeding the bytes in one piece.
func FuzzAgreement(f *testing.F) {
	for _, d := range loadCorpus(f) {
		for i, r := range fuzzRoots {
			if r == d.Schema {
				f.Add(uint8(i), d.Bytes, []byte{1, 7, 255})
			}
		}
	}
	f.Fuzz(func(t *testing.T, root uint8, doc, chunking []byte) {
		g := grammar(t, fuzzRoots[int(root)%len(fuzzRoots)])
		sizes := make([]int, len(chunking))
		for i, c := range chunking {
			sizes[i] = int(c)
		}
		o := feed(g, doc, sizes...)
		v, err := g.Schema().Decode(doc)
		switch {
		case err == nil && o.State() != stream.Accepted:
			t.Fatalf("the whole decoder admits %q; the stream says %s", doc, describe(o))
		case err == nil && (!bytes.Equal(o.Value().Canonical(), v.Canonical()) || string(o.Value().JSON()) != string(v.JSON())):
			t.Fatalf("different values for %q", doc)
		case err != nil && o.State() != stream.Refused:
			t.Fatalf("the whole decoder refuses %q (%v); the stream says %s", doc, err, describe(o))
		}
		if one := feed(g, doc); describe(one) != describe(o) {
			t.Fatalf("chunking %v changed the outcome of %q: %s, in one piece %s", sizes, doc, describe(o), describe(one))
		}
	})
}

// FuzzAgreementOnValues streams canonical documents of fuzzed edges.root values (every
// scalar representation, escapes, non-ASCII text, bound edges), whole or with one byte
// changed, in fuzzed chunks: the outcome must match the whole decoder's.
func FuzzAgreementOnValues(f *testing.F) {
	f.Add(true, int32(-5), int64(math.MinInt64), uint32(math.MaxUint32), uint64(math.MaxUint64), "é\n\"\x00\x1f\u2028😀", []byte{0, 255}, uint16(0), byte(0), []byte{1})
	f.Add(false, int32(0), int64(0), uint32(0), uint64(0), "", []byte(nil), uint16(300), byte('1'), []byte{3, 200})
	f.Fuzz(func(t *testing.T, flag bool, i32 int32, i64 int64, u32 uint32, u64 uint64, text string, blob []byte, at uint16, to byte, chunking []byte) {
		g := grammar(t, "edges.root")
		text = strings.ToValidUTF8(text, "?")
		m := prototest.NewMessage(t, testFiles(t), "edges.v1.Root", map[string]any{
			"flag": flag, "i32": i32, "i64": i64, "u32": u32, "u64": u64, "u8": u32 % 256, "small": int32(int64(i32) % 6),
			"band": 10 + int64(u64%11), "s32": i32, "sf64": i64, "f32": u32, "f64": u64, "opt": i32,
			"text": cut(text, 4096), "short": cut(text, 8), "blob": blob[:min(len(blob), 4096)],
			"tiny": blob[:min(len(blob), 2)], "empty": nil,
		})
		v, err := g.Schema().ValueOf(m)
		if err != nil {
			t.Fatal(err)
		}
		doc := v.Canonical()
		if to != 0 {
			doc[int(at)%len(doc)] = to
		}
		sizes := make([]int, len(chunking))
		for i, c := range chunking {
			sizes[i] = int(c)
		}
		o := feed(g, doc, sizes...)
		want, err := g.Schema().Decode(doc)
		if (err == nil) != (o.State() == stream.Accepted) || err == nil && !bytes.Equal(o.Value().JSON(), want.JSON()) {
			t.Fatalf("whole decoder: %v; stream: %s; document %q", err, describe(o), doc)
		}
		if o.State() == stream.Incomplete {
			t.Fatal("incomplete after Finish")
		}
	})
}

func cut(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
