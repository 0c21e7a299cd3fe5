package records_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/beamagents/beamagents/records"
)

func TestFrames(t *testing.T) {
	whole := frames("a", "bc")
	for _, tc := range []struct {
		name string
		data []byte
		recs int
		err  error
	}{
		{"empty", nil, 0, nil},
		{"whole", whole, 2, nil},
		{"cut record", whole[:len(whole)-1], 1, records.ErrFraming},
		{"cut varint", []byte{0x80}, 0, records.ErrFraming},
		{"overlong varint", bytes.Repeat([]byte{0xff}, 11), 0, records.ErrFraming},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := records.Frames(tc.data)
			if len(recs) != tc.recs || !errors.Is(err, tc.err) {
				t.Fatalf("%d records, err %v; want %d, %v", len(recs), err, tc.recs, tc.err)
			}
		})
	}
}

func TestFrameSize(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		size int64
		ok   bool
	}{
		{frames("abc"), 4, true},
		{frames("abc")[:2], 4, true},
		{[]byte{0x80}, 0, false},
		{nil, 0, false},
		{bytes.Repeat([]byte{0xff}, 11), 0, false},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 0, false},
	} {
		if size, ok := records.FrameSize(tc.data); size != tc.size || ok != tc.ok {
			t.Fatalf("%x: %d %v, want %d %v", tc.data, size, ok, tc.size, tc.ok)
		}
	}
}

func TestSplitFrames(t *testing.T) {
	whole := frames("ab", "cd")
	for _, tc := range []struct {
		name   string
		data   []byte
		recs   int
		used   int
		broken bool
	}{
		{"empty", nil, 0, 0, false},
		{"whole", whole, 2, len(whole), false},
		{"cut record", whole[:len(whole)-1], 1, len(whole) / 2, false},
		{"cut varint", []byte{0x80}, 0, 0, false},
		{"overlong varint", bytes.Repeat([]byte{0xff}, 11), 0, 0, true},
		{"impossible length", []byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, used, broken := records.SplitFrames(tc.data)
			if len(recs) != tc.recs || used != tc.used || broken != tc.broken {
				t.Fatalf("%d records, %d used, broken %v", len(recs), used, broken)
			}
		})
	}
}

func FuzzSplitFrames(f *testing.F) {
	f.Add(frames("a"))
	f.Add([]byte{0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, used, _ := records.SplitFrames(b)
		if used < 0 || used > len(b) {
			t.Fatalf("used %d of %d", used, len(b))
		}
		n := 0
		for _, r := range recs {
			n += len(r)
		}
		if n > used {
			t.Fatalf("%d record bytes in %d used", n, used)
		}
		again, used2, _ := records.SplitFrames(b[:used])
		if used2 != used || len(again) != len(recs) {
			t.Fatal("the records taken do not split alike")
		}
	})
}

// The whole reader and the incremental one agree on every input: the records SplitFrames
// takes are the ones Frames returns, and Frames refuses exactly what SplitFrames does not take
// whole. AppendFrame's frames read back.
func FuzzFrames(f *testing.F) {
	f.Add(frames("a", "bc"))
	f.Add([]byte{0xff, 0x01})
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		whole, err := records.Frames(b)
		recs, used, broken := records.SplitFrames(b)
		if len(recs) > len(whole) {
			t.Fatalf("SplitFrames took %d records, Frames %d", len(recs), len(whole))
		}
		for i := range recs {
			if !bytes.Equal(recs[i], whole[i]) {
				t.Fatalf("record %d differs", i)
			}
		}
		if !broken && (err == nil) != (used == len(b)) {
			t.Fatalf("Frames err %v, SplitFrames used %d of %d", err, used, len(b))
		}
		var again []byte
		for _, r := range whole {
			again = records.AppendFrame(again, r)
		}
		if back, err := records.Frames(again); err != nil || len(back) != len(whole) {
			t.Fatalf("appended frames read back as %d records, %v", len(back), err)
		}
	})
}
