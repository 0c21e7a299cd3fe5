package backend

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/beamagents/beamagents/ltm"
)

func TestRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want record
		err  error
	}{
		{"value", []byte("\x00\x00\x00\x00\x00\x00\x00\x07vabc"), record{seq: 7, live: true, value: []byte("abc")}, nil},
		{"empty value", []byte("\x00\x00\x00\x00\x00\x00\x01\x00v"), record{seq: 256, live: true, value: []byte{}}, nil},
		{"tombstone", []byte("\x7f\xff\xff\xff\xff\xff\xff\xfft"), record{seq: math.MaxInt64}, nil},
		{"short", []byte("\x00\x00\x00\x07v"), record{}, ltm.ErrCorrupt},
		{"negative seq", []byte("\x80\x00\x00\x00\x00\x00\x00\x00v"), record{}, ltm.ErrCorrupt},
		{"unknown kind", []byte("\x00\x00\x00\x00\x00\x00\x00\x01x"), record{}, ltm.ErrCorrupt},
		{"tombstone with a value", []byte("\x00\x00\x00\x00\x00\x00\x00\x01tz"), record{}, ltm.ErrCorrupt},
		{"value over the bound", append([]byte("\x00\x00\x00\x00\x00\x00\x00\x01v"), make([]byte, ltm.MaxValueBytes+1)...), record{}, ltm.ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := decodeRecord(tc.b)
			if !errors.Is(err, tc.err) || (tc.err != nil) != (err != nil) {
				t.Fatalf("decodeRecord: %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if r.seq != tc.want.seq || r.live != tc.want.live || !bytes.Equal(r.value, tc.want.value) {
				t.Fatalf("decodeRecord = %+v, want %+v", r, tc.want)
			}
			if got := encodeRecord(r); !bytes.Equal(got, tc.b) {
				t.Fatalf("encodeRecord = %q, want %q", got, tc.b)
			}
		})
	}
}

// Records order byte-wise as their seqs do: the backends' seq guards rely on it.
func TestRecordOrder(t *testing.T) {
	seqs := []int64{0, 1, 255, 256, 1 << 40, math.MaxInt64 - 1, math.MaxInt64}
	for i := 1; i < len(seqs); i++ {
		lo := encodeRecord(record{seq: seqs[i-1], live: true, value: []byte("\xff\xff")})
		hi := encodeRecord(record{seq: seqs[i]})
		if bytes.Compare(lo, hi) >= 0 {
			t.Errorf("record of seq %d does not sort below seq %d", seqs[i-1], seqs[i])
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""}, {"a", "b"}, {"a\xff", "b"}, {"\xff\xff", ""}, {"ab", "ac"},
	} {
		if got := prefixEnd([]byte(tc.in)); string(got) != tc.want || (tc.want == "") != (got == nil) {
			t.Errorf("prefixEnd(%q) = %q", tc.in, got)
		}
	}
}

// A decoded record re-encodes to the same bytes; nothing panics.
func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x07vabc"))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x07t"))
	f.Add([]byte("\x80\x00\x00\x00\x00\x00\x00\x00v"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			if !errors.Is(err, ltm.ErrCorrupt) {
				t.Fatalf("error %v is not ltm.ErrCorrupt", err)
			}
			return
		}
		if r.seq < 0 {
			t.Fatalf("negative seq %d", r.seq)
		}
		if got := encodeRecord(r); !bytes.Equal(got, b) {
			t.Fatalf("re-encoded %q, want %q", got, b)
		}
	})
}
