package pipeline

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// splitAll is the reference framing: the whole input in memory, records cut with
// binary.Uvarint, the first broken or oversized frame ending it.
func splitAll(data []byte) (recs [][]byte, broken bool) {
	for off := 0; off < len(data); {
		n, w := binary.Uvarint(data[off:])
		if w <= 0 || n > MaxRecordBytes || n > uint64(len(data)-off-w) {
			return recs, true
		}
		recs = append(recs, data[off+w:off+w+int(n)])
		off += w + int(n)
	}
	return recs, false
}

// The streaming reader emits exactly the records the in-memory reference cuts, and reports a
// broken frame exactly when the reference does, with errFraming.
func FuzzReadDelimited(f *testing.F) {
	for _, seed := range [][]byte{
		nil, {0}, {1, 'a'}, {2, 'a'}, {0x7f, 'x'}, {0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, {3, 'a', 'b', 'c', 1, 'd'},
		binary.AppendUvarint(nil, MaxRecordBytes+1),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got [][]byte
		bad, err := readDelimited(bufio.NewReader(bytes.NewReader(data)), func(r []byte) { got = append(got, r) })
		if err != nil {
			t.Fatalf("read error from memory: %v", err)
		}
		want, broken := splitAll(data)
		if broken != (bad != nil) || (bad != nil && !errors.Is(bad, errFraming)) {
			t.Fatalf("broken %v, reader says %v", broken, bad)
		}
		if len(got) != len(want) {
			t.Fatalf("%d records, reference %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
	})
}
