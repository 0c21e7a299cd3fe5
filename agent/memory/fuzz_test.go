package memory_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/beamagents/beamagents/agent/memory"
	"github.com/beamagents/beamagents/records"
)

// Whatever bytes a ring's memory entry holds, reading it never panics, and what it reads
// encodes to bytes that read back the same and encode to themselves.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(memory.Encode(memory.Contents{}))
	f.Add(memory.Encode(memory.Contents{Summary: []byte("a summary"), Compacted: 300, Entries: [][]byte{[]byte("e1"), nil, []byte("e3")}}))
	f.Add(records.AppendFrame(nil, []byte("a plain ring's entry")))
	f.Add([]byte{0x02, 0x01, 0xff})
	f.Add([]byte{0x0b, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := memory.Decode(b)
		if err != nil {
			return
		}
		enc := memory.Encode(c)
		again, err := memory.Decode(enc)
		if err != nil {
			t.Fatalf("re-encoded %x: %v", enc, err)
		}
		if !bytes.Equal(again.Summary, c.Summary) || again.Compacted != c.Compacted || !slices.EqualFunc(again.Entries, c.Entries, bytes.Equal) {
			t.Fatalf("read %+v, re-read %+v", c, again)
		}
		if !bytes.Equal(memory.Encode(again), enc) {
			t.Fatalf("encoding of %x is not a fixed point", b)
		}
	})
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"a plain ring", records.AppendFrame(nil, []byte("entry"))},
		{"an empty header", records.AppendFrame(nil, nil)},
		{"a later version", records.AppendFrame(nil, []byte{2, 0})},
		{"a broken count", records.AppendFrame(nil, []byte{1, 0x80})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := memory.Decode(tc.b); !errors.Is(err, memory.ErrCorrupt) {
				t.Fatalf("Decode(%x) = %v, want ErrCorrupt", tc.b, err)
			}
		})
	}
}
