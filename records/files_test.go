package records_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/records"
)

const intentType protoreflect.FullName = "beam_agents.v1.ToolIntent"

func frames(recs ...string) []byte {
	var b []byte
	for _, r := range recs {
		b = append(binary.AppendUvarint(b, uint64(len(r))), r...)
	}
	return b
}

func TestRecords(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want protoreflect.FullName
		recs int
		err  error
	}{
		{"typed", append(records.Header(intentType), frames("a", "bc")...), intentType, 2, nil},
		{"typed, empty", records.Header(intentType), intentType, 0, nil},
		{"unheadered", frames("a"), intentType, 1, nil},
		{"another type", append(records.Header("beam_agents.v1.FinalReply"), frames("a")...), intentType, 0, records.ErrWrongType},
		{"marker without a header", []byte("\xff\xff\xff\xff\x0fnot it\n"), intentType, 0, records.ErrHeader},
		{"header cut short", []byte("\xff\xff\xff\xff\x0fbeamagents beam_agents"), intentType, 0, records.ErrHeader},
		{"bad type name", []byte("\xff\xff\xff\xff\x0fbeamagents a..b\n"), intentType, 0, records.ErrHeader},
		{"broken framing", append(records.Header(intentType), 5, 'a'), intentType, 0, records.ErrFraming},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := records.Records("f", tc.data, tc.want)
			if !errors.Is(err, tc.err) || len(recs) != tc.recs {
				t.Fatalf("%d records, err %v; want %d, %v", len(recs), err, tc.recs, tc.err)
			}
		})
	}
}

func TestReadHeaderLeavesTheRecords(t *testing.T) {
	for _, data := range [][]byte{append(records.Header(intentType), frames("abc")...), frames("abc"), {}, {0xff}} {
		r := bufio.NewReader(bytes.NewReader(data))
		got, err := records.ReadHeader(r)
		_, rest, serr := records.Split(data)
		left := new(bytes.Buffer)
		left.ReadFrom(r)
		if err != nil || serr != nil || !bytes.Equal(left.Bytes(), rest) {
			t.Fatalf("%x: type %q err %v / %v, left %x want %x", data, got, err, serr, left.Bytes(), rest)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		err        error
	}{
		{"an intent", `{"intentId":"i","toolName":"t"}`, nil},
		{"a dead letter", `{"reason":"model_error","detail":"x"}`, records.ErrWrongType},
		{"no known shape", `{"nothing":1}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := records.CheckJSON("f.jsonl", []byte(tc.line), intentType); !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
		})
	}
}

func TestSniffByName(t *testing.T) {
	if err := records.Sniff("out/dead_letters-00001-of-00002.binpb", frames("x"), intentType); !errors.Is(err, records.ErrWrongType) {
		t.Fatalf("an unheadered dead-letter shard read as intents: %v", err)
	}
	if err := records.Sniff("in/mine.binpb", frames("x"), intentType); err != nil {
		t.Fatal(err)
	}
}

func TestReadCapped(t *testing.T) {
	if _, err := records.ReadCapped("/dev/zero", 1<<10); !errors.Is(err, records.ErrTooLarge) {
		t.Fatalf("/dev/zero: %v", err)
	}
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("abc"), 0o644)
	if b, err := records.ReadCapped(p, 3); err != nil || string(b) != "abc" {
		t.Fatalf("%q %v", b, err)
	}
}

func TestWriteAtomicLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "results.binpb")
	if err := records.WriteAtomic(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := records.WriteAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("a write into a missing folder succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "results.binpb" {
		t.Fatalf("files %v", entries)
	}
}

// Split and ReadHeader agree on every input, and neither panics.
func FuzzSplit(f *testing.F) {
	f.Add(append(records.Header(intentType), frames("a")...))
	f.Add([]byte("\xff\xff\xff\xff\x0fbeamagents \n"))
	f.Add(frames("abc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		typ, rest, err := records.Split(data)
		r := bufio.NewReader(bytes.NewReader(data))
		typ2, err2 := records.ReadHeader(r)
		if (err == nil) != (err2 == nil) || typ != typ2 {
			t.Fatalf("Split %q %v, ReadHeader %q %v", typ, err, typ2, err2)
		}
		if err == nil {
			left := new(bytes.Buffer)
			left.ReadFrom(r)
			if !bytes.Equal(left.Bytes(), rest) {
				t.Fatalf("rest %x, reader left %x", rest, left.Bytes())
			}
			records.Frames(rest)
		}
	})
}
