package interaction_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/beamagents/beamagents/interaction"
)

var fuzzRoots = []string{"shop.proposal", "edges.root"}

// FuzzDecode: Decode never panics; whatever it admits re-renders to exactly the input and
// decodes again to the same value; its recognizer and its step-wise reference agree.
func FuzzDecode(f *testing.F) {
	for _, d := range loadCorpus(f) {
		for i, r := range fuzzRoots {
			if r == d.Schema {
				f.Add(uint8(i), d.Bytes)
			}
		}
	}
	f.Fuzz(func(t *testing.T, root uint8, doc []byte) {
		s := mustSchema(t, fuzzRoots[int(root)%len(fuzzRoots)])
		v, err := s.Decode(doc)
		checkPathsAgree(t, s, doc)
		if err != nil {
			if _, ok := err.(*interaction.Error); !ok {
				t.Fatalf("untyped error %T", err)
			}
			return
		}
		if !bytes.Equal(v.Canonical(), doc) {
			t.Fatalf("admitted %q but renders %q", doc, v.Canonical())
		}
		again, err := s.Decode(v.Canonical())
		if err != nil || !bytes.Equal(again.JSON(), v.JSON()) {
			t.Fatalf("re-decoding the canonical document: %v", err)
		}
	})
}

// FuzzRoundTrip builds edges.root values from fuzzed scalars: ValueOf, Decode and CopyTo
// must round-trip them exactly, and a one-byte mutation of the canonical document must be
// judged the same way by both decoding paths.
func FuzzRoundTrip(f *testing.F) {
	f.Add(true, int32(-1), int64(math.MinInt64), uint32(math.MaxUint32), uint64(math.MaxUint64), "é\n\"\x00", []byte{0, 255}, uint16(10), byte('x'))
	f.Add(false, int32(0), int64(0), uint32(0), uint64(0), "", []byte(nil), uint16(0), byte('{'))
	f.Fuzz(func(t *testing.T, flag bool, i32 int32, i64 int64, u32 uint32, u64 uint64, text string, blob []byte, at uint16, to byte) {
		s := mustSchema(t, "edges.root")
		text = strings.ToValidUTF8(text, "?")
		m := message(t, "edges.v1.Root", map[string]any{
			"flag": flag, "i32": i32, "i64": i64, "u32": u32, "u64": u64, "u8": u32 % 256, "small": int32(int64(i32) % 6),
			"band": 10 + int64(u64%11), "s32": i32, "sf64": i64, "f32": u32, "f64": u64, "opt": i32,
			"text": truncateUTF8(text, 4096), "short": truncateUTF8(text, 8), "blob": blob[:min(len(blob), 4096)],
			"tiny": blob[:min(len(blob), 2)], "empty": nil,
		})
		v, err := s.ValueOf(m)
		if err != nil {
			t.Fatal(err)
		}
		doc := v.Canonical()
		got, err := s.Decode(doc)
		if err != nil {
			t.Fatalf("Decode(ValueOf): %v", err)
		}
		back := dynamicpb.NewMessage(m.Descriptor())
		if err := got.CopyTo(back); err != nil || !proto.Equal(back, m) {
			t.Fatalf("CopyTo: %v\n got %v\nwant %v", err, back, m)
		}
		doc[int(at)%len(doc)] = to
		checkPathsAgree(t, s, doc)
	})
}

func truncateUTF8(s string, n int) string {
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
