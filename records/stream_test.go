package records_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/beamagents/beamagents/records"
)

const streamMax = 1 << 10

// The streaming reader emits exactly the records the whole reader (Frames) cuts, and reports
// a broken frame exactly when Frames does or a frame exceeds its bound, with CodeFraming.
func FuzzReadFrames(f *testing.F) {
	for _, seed := range [][]byte{
		nil, {0}, {1, 'a'}, {2, 'a'}, {0x7f, 'x'}, {0x80}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, {3, 'a', 'b', 'c', 1, 'd'},
		binary.AppendUvarint(nil, streamMax+1),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got [][]byte
		bad, err := records.ReadFrames(bufio.NewReader(bytes.NewReader(data)), streamMax, func(r []byte) { got = append(got, r) })
		if err != nil {
			t.Fatalf("read error from memory: %v", err)
		}
		want, werr := records.Frames(data)
		for i, r := range want {
			if len(r) > streamMax {
				want, werr = want[:i], records.ErrFraming
				break
			}
		}
		if (werr != nil) != (bad != nil) || bad != nil && !errors.Is(bad, records.ErrFraming) {
			t.Fatalf("Frames says %v, ReadFrames %v", werr, bad)
		}
		if len(got) != len(want) {
			t.Fatalf("%d records, Frames %d", len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
	})
}

func TestReadFramesNamesTheByte(t *testing.T) {
	data := append([]byte{1, 'a'}, binary.AppendUvarint(nil, streamMax+1)...)
	bad, _ := records.ReadFrames(bufio.NewReader(bytes.NewReader(data)), streamMax, func([]byte) {})
	var e *records.Error
	if !errors.As(bad, &e) || e.Detail != "broken record framing at byte 2: a frame of 1025 bytes exceeds the record bound of 1024" {
		t.Fatalf("%v", bad)
	}
}
