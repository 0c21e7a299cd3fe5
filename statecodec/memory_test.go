package statecodec_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/statecodec"
)

func goldenMemory() *pb.MemoryBlob {
	for _, c := range goldenv1.Cases() {
		if c.File == "memory_blob.binpb" {
			return c.Build().(*pb.MemoryBlob)
		}
	}
	panic("no memory golden")
}

func entry(k, v string, at int64) *pb.MemoryEntry {
	return &pb.MemoryEntry{Key: k, Value: []byte(v), LastAccessMs: at}
}

func TestDecodeMemory(t *testing.T) {
	future := marshal(t, &pb.MemoryBlob{StateSchemaVersion: 2, Entries: []*pb.MemoryEntry{entry("a", "x", 1)}, TotalValueBytes: 1})
	tests := []struct {
		name      string
		in        []byte
		opts      statecodec.MemoryOptions
		want      *pb.MemoryBlob
		wantStats statecodec.Stats
		wantErr   *statecodec.Error
	}{
		{name: "empty cell is a new memory", in: nil,
			want: &pb.MemoryBlob{StateSchemaVersion: 1}},
		{name: "golden v1 blob verbatim", in: golden(t, "memory_blob.binpb"), want: goldenMemory()},
		{name: "pre-versioned blob upgraded explicitly",
			in:        marshal(t, &pb.MemoryBlob{Entries: []*pb.MemoryEntry{entry("a", "xy", 5)}, TotalValueBytes: 2}),
			want:      &pb.MemoryBlob{StateSchemaVersion: 1, Entries: []*pb.MemoryEntry{entry("a", "xy", 5)}, TotalValueBytes: 2},
			wantStats: statecodec.Stats{Migrated: 1, PreVersioned: 1}},
		{name: "stored total too high is repaired",
			in:        marshal(t, &pb.MemoryBlob{StateSchemaVersion: 1, Entries: []*pb.MemoryEntry{entry("a", "xy", 5)}, TotalValueBytes: 99}),
			want:      &pb.MemoryBlob{StateSchemaVersion: 1, Entries: []*pb.MemoryEntry{entry("a", "xy", 5)}, TotalValueBytes: 2},
			wantStats: statecodec.Stats{TotalRepairs: 1}},
		{name: "missing stored total is repaired",
			in:        marshal(t, &pb.MemoryBlob{StateSchemaVersion: 1, Entries: []*pb.MemoryEntry{entry("a", "xy", 5)}}),
			want:      &pb.MemoryBlob{StateSchemaVersion: 1, Entries: []*pb.MemoryEntry{entry("a", "xy", 5)}, TotalValueBytes: 2},
			wantStats: statecodec.Stats{TotalRepairs: 1}},
		{name: "negative stored total is repaired",
			in:        marshal(t, &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: -4}),
			want:      &pb.MemoryBlob{StateSchemaVersion: 1},
			wantStats: statecodec.Stats{TotalRepairs: 1}},
		{name: "duplicate key keeps the later entry",
			in: marshal(t, &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: 6, Entries: []*pb.MemoryEntry{
				entry("a", "old", 1), entry("b", "b", 2), entry("a", "ne", 3)}}),
			want:      &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: 3, Entries: []*pb.MemoryEntry{entry("b", "b", 2), entry("a", "ne", 3)}},
			wantStats: statecodec.Stats{DuplicatesDropped: 1}},
		{name: "blob over the byte cap is evicted on load",
			in: marshal(t, &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: 9, Entries: []*pb.MemoryEntry{
				entry("a", "aaa", 1), entry("b", "bbb", 2), entry("c", "ccc", 3)}}),
			opts:      statecodec.MemoryOptions{MaxValueBytes: 6},
			want:      &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: 6, Entries: []*pb.MemoryEntry{entry("b", "bbb", 2), entry("c", "ccc", 3)}},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 3}},
		{name: "blob over the key cap is evicted on load",
			in: marshal(t, &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: 3, Entries: []*pb.MemoryEntry{
				entry("a", "a", 1), entry("b", "b", 2), entry("c", "c", 3)}}),
			opts:      statecodec.MemoryOptions{MaxEntries: 1},
			want:      &pb.MemoryBlob{StateSchemaVersion: 1, TotalValueBytes: 1, Entries: []*pb.MemoryEntry{entry("c", "c", 3)}},
			wantStats: statecodec.Stats{Evictions: 2, EvictedBytes: 2}},
		{name: "truncated bytes are corrupt", in: golden(t, "memory_blob.binpb")[:10], wantErr: statecodec.ErrCorrupt},
		{name: "invalid UTF-8 key is corrupt", in: []byte{0x08, 0x01, 0x12, 0x03, 0x0a, 0x01, 0xff}, wantErr: statecodec.ErrCorrupt},
		{name: "entry length past the end is corrupt", in: []byte{0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0a}, wantErr: statecodec.ErrCorrupt},
		{name: "group end without start is corrupt", in: []byte{0x0c}, wantErr: statecodec.ErrCorrupt},
		{name: "future version is refused", in: future, wantErr: statecodec.ErrFutureVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := bytes.Clone(tc.in)
			m, err := statecodec.DecodeMemory(in, tc.opts)
			if !bytes.Equal(in, tc.in) {
				t.Fatal("decode modified its input")
			}
			if tc.wantErr != nil {
				wantErr(t, err, tc.wantErr, statecodec.CellMemory)
				if m != nil {
					t.Fatal("a value came back with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustEqualProto(t, tc.want, m.Proto())
			if m.Stats() != tc.wantStats {
				t.Fatalf("stats = %+v, want %+v", m.Stats(), tc.wantStats)
			}
		})
	}
}

func TestDecodeMemoryFutureVersionUnwrapsToMigrate(t *testing.T) {
	_, err := statecodec.DecodeMemory(marshal(t, &pb.MemoryBlob{StateSchemaVersion: 3}), statecodec.MemoryOptions{})
	var me *migrate.Error
	if !errorsAs(err, &me) || me.Version != 3 || me.Current != migrate.CurrentStateSchemaVersion {
		t.Fatalf("err = %v, want a *migrate.Error for version 3", err)
	}
}

// memOp is one step of a memory scenario.
type memOp struct {
	op    string // get, peek, put, del
	key   string
	val   string
	at    int64
	found bool // get/peek/del: expected presence
	err   *statecodec.Error
}

func TestMemoryOperations(t *testing.T) {
	tests := []struct {
		name      string
		opts      statecodec.MemoryOptions
		ops       []memOp
		want      []*pb.MemoryEntry
		wantStats statecodec.Stats
	}{
		{name: "puts append in order",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 10}, {op: "put", key: "b", val: "22", at: 20}},
			want: []*pb.MemoryEntry{entry("a", "1", 10), entry("b", "22", 20)}},
		{name: "get moves to most recent and stamps event time",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 10}, {op: "put", key: "b", val: "2", at: 20}, {op: "get", key: "a", at: 30, found: true}},
			want: []*pb.MemoryEntry{entry("b", "2", 20), entry("a", "1", 30)}},
		{name: "late event time never moves last access backwards",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 50}, {op: "put", key: "b", val: "2", at: 60}, {op: "get", key: "a", at: 5, found: true}},
			want: []*pb.MemoryEntry{entry("b", "2", 60), entry("a", "1", 50)}},
		{name: "peek changes nothing",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 10}, {op: "put", key: "b", val: "2", at: 20}, {op: "peek", key: "a", found: true}},
			want: []*pb.MemoryEntry{entry("a", "1", 10), entry("b", "2", 20)}},
		{name: "get and peek of a missing key",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 10}, {op: "get", key: "z", at: 99}, {op: "peek", key: "z"}},
			want: []*pb.MemoryEntry{entry("a", "1", 10)}},
		{name: "put of an existing key replaces and moves it",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 10}, {op: "put", key: "b", val: "2", at: 20}, {op: "put", key: "a", val: "333", at: 30}},
			want: []*pb.MemoryEntry{entry("b", "2", 20), entry("a", "333", 30)}},
		{name: "delete",
			ops:  []memOp{{op: "put", key: "a", val: "1", at: 10}, {op: "put", key: "b", val: "2", at: 20}, {op: "del", key: "a", found: true}, {op: "del", key: "a"}},
			want: []*pb.MemoryEntry{entry("b", "2", 20)}},
		{name: "byte cap evicts least recently used",
			opts:      statecodec.MemoryOptions{MaxValueBytes: 10},
			ops:       []memOp{{op: "put", key: "a", val: "aaaa", at: 1}, {op: "put", key: "b", val: "bbbb", at: 2}, {op: "get", key: "a", at: 3, found: true}, {op: "put", key: "c", val: "cccc", at: 4}},
			want:      []*pb.MemoryEntry{entry("a", "aaaa", 3), entry("c", "cccc", 4)},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 4}},
		{name: "key cap evicts least recently used",
			opts:      statecodec.MemoryOptions{MaxEntries: 2},
			ops:       []memOp{{op: "put", key: "a", at: 1}, {op: "put", key: "b", at: 2}, {op: "put", key: "c", at: 3}, {op: "put", key: "d", at: 4}},
			want:      []*pb.MemoryEntry{entry("c", "", 3), entry("d", "", 4)},
			wantStats: statecodec.Stats{Evictions: 2}},
		{name: "a value of exactly the cap evicts everything else",
			opts:      statecodec.MemoryOptions{MaxValueBytes: 4},
			ops:       []memOp{{op: "put", key: "a", val: "a", at: 1}, {op: "put", key: "b", val: "b", at: 2}, {op: "put", key: "c", val: "cccc", at: 3}},
			want:      []*pb.MemoryEntry{entry("c", "cccc", 3)},
			wantStats: statecodec.Stats{Evictions: 2, EvictedBytes: 2}},
		{name: "growing an existing value evicts others, never itself",
			opts:      statecodec.MemoryOptions{MaxValueBytes: 6},
			ops:       []memOp{{op: "put", key: "a", val: "aa", at: 1}, {op: "put", key: "b", val: "bb", at: 2}, {op: "put", key: "a", val: "aaaaa", at: 3}},
			want:      []*pb.MemoryEntry{entry("a", "aaaaa", 3)},
			wantStats: statecodec.Stats{Evictions: 1, EvictedBytes: 2}},
		{name: "a value larger than the cap is refused and changes nothing",
			opts: statecodec.MemoryOptions{MaxValueBytes: 4},
			ops:  []memOp{{op: "put", key: "a", val: "a", at: 1}, {op: "put", key: "b", val: "bbbbb", at: 2, err: statecodec.ErrTooLarge}},
			want: []*pb.MemoryEntry{entry("a", "a", 1)}},
		{name: "a non-UTF-8 key is refused and changes nothing",
			ops:  []memOp{{op: "put", key: "a", val: "a", at: 1}, {op: "put", key: "\xff", val: "b", at: 2, err: statecodec.ErrInvalidArgument}},
			want: []*pb.MemoryEntry{entry("a", "a", 1)}},
		{name: "the empty key and empty values are ordinary",
			ops:  []memOp{{op: "put", key: "", val: "", at: 1}, {op: "get", key: "", at: 2, found: true}},
			want: []*pb.MemoryEntry{entry("", "", 2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := statecodec.NewMemory(tc.opts)
			for i, op := range tc.ops {
				applyMemOp(t, i, m, op)
				checkMemoryInvariants(t, m)
			}
			got := m.Proto()
			mustEqualProto(t, &pb.MemoryBlob{StateSchemaVersion: 1, Entries: tc.want, TotalValueBytes: sumValues(tc.want)}, got)
			if m.Stats() != tc.wantStats {
				t.Fatalf("stats = %+v, want %+v", m.Stats(), tc.wantStats)
			}
			// The encoded cell decodes to the same value with nothing to repair.
			b, err := m.Encode()
			if err != nil {
				t.Fatal(err)
			}
			back, err := statecodec.DecodeMemory(b, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			mustEqualProto(t, got, back.Proto())
			if back.Stats() != (statecodec.Stats{}) {
				t.Fatalf("re-decode stats = %+v", back.Stats())
			}
		})
	}
}

func applyMemOp(t *testing.T, i int, m *statecodec.Memory, op memOp) {
	t.Helper()
	switch op.op {
	case "put":
		before := m.Proto()
		err := m.Put(op.key, []byte(op.val), op.at)
		if op.err != nil {
			wantErr(t, err, op.err, statecodec.CellMemory)
			if !proto.Equal(before, m.Proto()) {
				t.Fatalf("op %d: refused put changed the memory", i)
			}
		} else if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	case "get", "peek":
		var v []byte
		var ok bool
		if op.op == "get" {
			v, ok = m.Get(op.key, op.at)
		} else {
			v, ok = m.Peek(op.key)
		}
		if ok != op.found {
			t.Fatalf("op %d: %s(%q) found = %v", i, op.op, op.key, ok)
		}
		if ok && len(v) > 0 {
			v[0] ^= 0xff // a copy: must not reach the state
			if w, _ := m.Peek(op.key); bytes.Equal(w, v) {
				t.Fatalf("op %d: %s returned the stored bytes, not a copy", i, op.op)
			}
		}
	case "del":
		if ok := m.Delete(op.key); ok != op.found {
			t.Fatalf("op %d: Delete(%q) = %v", i, op.key, ok)
		}
	default:
		t.Fatalf("unknown op %q", op.op)
	}
}

func sumValues(es []*pb.MemoryEntry) int64 {
	var n int64
	for _, e := range es {
		n += int64(len(e.Value))
	}
	return n
}

func checkMemoryInvariants(t testing.TB, m *statecodec.Memory) {
	t.Helper()
	p := m.Proto()
	o := m.Options()
	keys := map[string]bool{}
	for _, e := range p.Entries {
		if keys[e.Key] {
			t.Fatalf("duplicate key %q", e.Key)
		}
		keys[e.Key] = true
	}
	switch {
	case p.TotalValueBytes != sumValues(p.Entries) || m.TotalValueBytes() != p.TotalValueBytes:
		t.Fatalf("total %d, entries sum to %d", p.TotalValueBytes, sumValues(p.Entries))
	case p.TotalValueBytes > o.MaxValueBytes || len(p.Entries) > o.MaxEntries || m.Len() != len(p.Entries):
		t.Fatalf("caps broken: %d bytes / %d keys over %+v", p.TotalValueBytes, len(p.Entries), o)
	case p.StateSchemaVersion != migrate.CurrentStateSchemaVersion:
		t.Fatalf("version %d", p.StateSchemaVersion)
	}
}

func TestMemoryDefaults(t *testing.T) {
	o := statecodec.NewMemory(statecodec.MemoryOptions{}).Options()
	if o.MaxValueBytes != 100<<10 || o.MaxEntries != statecodec.DefaultMemoryMaxEntries {
		t.Fatalf("defaults = %+v", o)
	}
	if o := statecodec.NewMemory(statecodec.MemoryOptions{MaxValueBytes: -1, MaxEntries: -1}).Options(); o != (statecodec.MemoryOptions{MaxValueBytes: 100 << 10, MaxEntries: statecodec.DefaultMemoryMaxEntries}) {
		t.Fatalf("negative options = %+v, want defaults", o)
	}
	// The default byte cap holds exactly 100 KiB of values.
	m := statecodec.NewMemory(statecodec.MemoryOptions{})
	for i := range 100 {
		if err := m.Put(strings.Repeat("k", i+1), make([]byte, 1024), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if m.Len() != 100 || m.Stats().Evictions != 0 {
		t.Fatalf("100 × 1 KiB: len %d, stats %+v", m.Len(), m.Stats())
	}
	if err := m.Put("one-more", []byte{1}, 100); err != nil || m.Stats().Evictions != 1 {
		t.Fatalf("one byte over the cap: %v, stats %+v", err, m.Stats())
	}
}

func TestMemoryAllYieldsCopiesInLRUOrder(t *testing.T) {
	m, err := statecodec.DecodeMemory(golden(t, "memory_blob.binpb"), statecodec.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k, v := range m.All() {
		keys = append(keys, k)
		v[0] = '!'
	}
	if !slices.Equal(keys, []string{"a", "b", "c"}) {
		t.Fatalf("keys = %v", keys)
	}
	mustEqualProto(t, goldenMemory(), m.Proto())
	for k := range m.All() {
		if k != "a" {
			t.Fatal("All did not stop when asked")
		}
		break
	}
}

// Unknown fields written by a newer binary within version 1 survive decode, put and encode,
// at the top level and inside entries.
func TestMemoryUnknownFieldsSurviveRewrite(t *testing.T) {
	e := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "a")
	e = withUnknown(e)
	b := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
	b = protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), e)
	b = withUnknown(b)
	m, err := statecodec.DecodeMemory(b, statecodec.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Put("a", []byte("new"), 7); err != nil {
		t.Fatal(err)
	}
	out, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("from-a-newer-binary")); n != 2 {
		t.Fatalf("re-encoded cell keeps %d of 2 unknown fields", n)
	}
}
