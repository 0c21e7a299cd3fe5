package statecodec_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// cloneable is what the clone tests need of Memory and Cache.
type cloneable[V any] interface {
	Proto() V
	Encode() ([]byte, error)
}

// checkClones runs ops on a value, cloning it before each op (a clone of a clone of ...), and
// requires of every clone that it starts equal to the value, that the ops on either never show
// in the other, and that the remaining ops give on both what they give on the value decoded
// afresh from its bytes.
func checkClones[V proto.Message, T cloneable[V]](t *testing.T, start T, clone func(T) T, decode func([]byte) T, ops []func(T)) {
	t.Helper()
	v := start
	for i := range ops {
		before := v.Proto()
		b, err := v.Encode()
		if err != nil {
			t.Fatal(err)
		}
		c, fresh := clone(v), decode(b)
		mustEqualProto(t, before, c.Proto())
		for _, op := range ops[i:] {
			op(c)
			op(fresh)
		}
		mustEqualProto(t, before, v.Proto()) // the clone's changes do not show in the value
		mustEqualProto(t, fresh.Proto(), c.Proto())
		cb, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if fb, _ := fresh.Encode(); string(cb) != string(fb) {
			t.Fatalf("op %d: the clone encodes differently from the value decoded afresh", i)
		}
		d := clone(v)
		for _, op := range ops[i:] {
			op(v)
		}
		mustEqualProto(t, before, d.Proto()) // the value's changes do not show in the clone
		mustEqualProto(t, fresh.Proto(), v.Proto())
		v = clone(d)
		ops[i](v)
	}
}

func TestCacheClone(t *testing.T) {
	k1, k2, k3 := cacheKey("1"), cacheKey("2"), cacheKey("3")
	opts := statecodec.CacheOptions{MaxEntries: 2, MaxResponseBytes: 6}
	blob := &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: []*pb.LlmCacheEntry{full(k1, "a", t0, t0), full(k2, "bb", t0+1, t0+1)}, TotalResponseBytes: 3}
	blob.Entries[0].ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	decode := func(b []byte) *statecodec.Cache {
		c, err := statecodec.DecodeCache(b, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	lookup := func(k string, at int64) func(*statecodec.Cache) {
		return func(c *statecodec.Cache) { c.Lookup(k, at) }
	}
	store := func(k, resp string, at int64) func(*statecodec.Cache) {
		return func(c *statecodec.Cache) { c.Store(k, []byte(resp), at) }
	}
	checkClones(t, decode(marshal(t, blob)), (*statecodec.Cache).Clone, decode, []func(*statecodec.Cache){
		lookup(k1, t0+2),           // a hit: the entry's last access changes, it moves to the back
		store(k1, "changed", t0+3), // too big: kept as digest only, in place
		store(k2, "b2", t0+4),      // replaced in place, created_at restarts
		store(k3, "c", t0+5),       // a new entry evicts the least recently used
		lookup(k2, t0+6),
		func(c *statecodec.Cache) { c.Expire(t0 + 7*3600*1000) },
	})
}

func TestMemoryClone(t *testing.T) {
	opts := statecodec.MemoryOptions{MaxEntries: 2}
	blob := &pb.MemoryBlob{StateSchemaVersion: 1, Entries: []*pb.MemoryEntry{{Key: "a", Value: []byte("1"), LastAccessMs: t0}, {Key: "b", Value: []byte("22"), LastAccessMs: t0}}, TotalValueBytes: 3}
	blob.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
	decode := func(b []byte) *statecodec.Memory {
		m, err := statecodec.DecodeMemory(b, opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	put := func(k, v string, at int64) func(*statecodec.Memory) {
		return func(m *statecodec.Memory) { m.Put(k, []byte(v), at) }
	}
	checkClones(t, decode(marshal(t, blob)), (*statecodec.Memory).Clone, decode, []func(*statecodec.Memory){
		func(m *statecodec.Memory) { m.Get("a", t0+1) }, // last access changes, "a" moves to the back
		put("a", "changed", t0+2),                       // replaced in place
		put("c", "3", t0+3),                             // evicts "b"
		func(m *statecodec.Memory) { m.Delete("a") },
	})
}

// frozenValue is a value the clone fuzzers stopped changing, with its encoding at that time.
type frozenValue[T interface{ Encode() ([]byte, error) }] struct {
	v   T
	enc []byte
}

// freeze records v's encoding and keeps the last few frozen values.
func freeze[T interface{ Encode() ([]byte, error) }](t *testing.T, kept []frozenValue[T], v T) []frozenValue[T] {
	t.Helper()
	b, err := v.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return append(kept[max(0, len(kept)-7):], frozenValue[T]{v, b})
}

// mustBeUnchanged fails unless every frozen value still encodes as when it was frozen: what
// was done to its clones, or to the value it was cloned from, never shows in it.
func mustBeUnchanged[T interface{ Encode() ([]byte, error) }](t *testing.T, kept []frozenValue[T]) {
	t.Helper()
	for i, k := range kept {
		if b, err := k.v.Encode(); err != nil || !bytes.Equal(b, k.enc) {
			t.Fatalf("frozen value %d changed (%v)", i, err)
		}
	}
}

// FuzzCacheCloneOperations is FuzzCacheOperations with clones taken between the operations,
// the operations going on either on the clone or on the value cloned: the value in use always
// equals the reference, and every value left behind stays exactly as it was.
func FuzzCacheCloneOperations(f *testing.F) {
	f.Add([]byte{0, 1, 5, 2, 0, 0, 0, 2, 9, 3, 0, 0, 1, 1, 0, 0, 1, 30, 2, 0, 0, 1, 1, 200})
	f.Add(bytes.Repeat([]byte{0, 7, 20, 2, 0, 0, 1, 3, 90, 3, 0, 0, 0, 4, 3}, 12))
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := statecodec.NewCache(statecodec.CacheOptions{MaxEntries: 3, MaxResponseBytes: 24, TTL: 500 * time.Millisecond})
		ref := &cacheModel{ttl: 500, maxBytes: 24, maxEntries: 3}
		var kept []frozenValue[*statecodec.Cache]
		var at int64
		for i := 0; i+2 < len(ops); i += 3 {
			key := cacheKey(fmt.Sprint(ops[i+1] % 5))
			switch ops[i] % 4 {
			case 0:
				at += int64(ops[i+2]) - 40
				r := bytes.Repeat([]byte{ops[i+1] % 3}, int(ops[i+2]%32))
				if _, err := c.Store(key, r, at); err != nil {
					t.Fatal(err)
				}
				ref.store(key, bytes.Clone(r), at)
			case 1:
				at += int64(ops[i+2]) - 40
				if _, err := c.Lookup(key, at); err != nil {
					t.Fatal(err)
				}
				ref.expire(at)
				if j := ref.index(key); j >= 0 {
					ref.touch(j, at)
				}
			case 2: // go on with the clone
				kept = freeze(t, kept, c)
				c = c.Clone()
			case 3: // go on with the value, leave the clone
				kept = freeze(t, kept, c.Clone())
			}
			checkCacheInvariants(t, c)
			want := &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: ref.entries, TotalResponseBytes: sumResponses(ref.entries)}
			if !proto.Equal(want, c.Proto()) {
				t.Fatalf("after op %d: cache differs from the reference", i/3)
			}
			mustBeUnchanged(t, kept)
		}
	})
}

// FuzzMemoryCloneOperations is FuzzCacheCloneOperations for working memory.
func FuzzMemoryCloneOperations(f *testing.F) {
	f.Add([]byte{0, 1, 5, 2, 0, 0, 0, 2, 9, 3, 0, 0, 1, 1, 0, 4, 1, 0, 0, 3, 40})
	f.Add(bytes.Repeat([]byte{0, 7, 20, 2, 0, 0, 1, 3, 0, 3, 0, 0, 4, 3, 0}, 12))
	f.Fuzz(func(t *testing.T, ops []byte) {
		m := statecodec.NewMemory(statecodec.MemoryOptions{MaxValueBytes: 48, MaxEntries: 4})
		ref := &memModel{maxBytes: 48, maxEntries: 4}
		var kept []frozenValue[*statecodec.Memory]
		var at int64
		for i := 0; i+2 < len(ops); i += 3 {
			key := fmt.Sprintf("k%d", ops[i+1]%7)
			at += int64(ops[i+2]%5) - 1
			switch ops[i] % 5 {
			case 0:
				v := bytes.Repeat([]byte{ops[i+1]}, int(ops[i+2]%60))
				m.Put(key, v, at)
				ref.put(key, bytes.Clone(v), at)
			case 1:
				if _, ok := m.Get(key, at); ok {
					ref.touch(ref.index(key), at)
				}
			case 2:
				kept = freeze(t, kept, m)
				m = m.Clone()
			case 3:
				kept = freeze(t, kept, m.Clone())
			case 4:
				if m.Delete(key) {
					ref.entries = slices.Delete(ref.entries, ref.index(key), ref.index(key)+1)
				}
			}
			checkMemoryInvariants(t, m)
			want := &pb.MemoryBlob{StateSchemaVersion: 1, Entries: ref.entries, TotalValueBytes: sumValues(ref.entries)}
			if !proto.Equal(want, m.Proto()) {
				t.Fatalf("after op %d: memory differs from the reference", i/3)
			}
			mustBeUnchanged(t, kept)
		}
	})
}

// Clone copies a blob field by field: these must be all its fields, or a field added to the
// schema would be lost by every clone. Unknown fields are kept.
func TestCloneCopiesEveryBlobField(t *testing.T) {
	for _, tc := range []struct {
		blob   proto.Message
		fields []string
	}{
		{&pb.MemoryBlob{}, []string{"state_schema_version", "entries", "total_value_bytes"}},
		{&pb.LlmCacheBlob{}, []string{"state_schema_version", "entries", "total_response_bytes"}},
	} {
		fields := tc.blob.ProtoReflect().Descriptor().Fields()
		var names []string
		for i := range fields.Len() {
			names = append(names, string(fields.Get(i).Name()))
		}
		if !slices.Equal(names, tc.fields) {
			t.Fatalf("%s has fields %v: update its Clone", tc.blob.ProtoReflect().Descriptor().FullName(), names)
		}
	}
	unknown := protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1)
	c, err := statecodec.DecodeCache(append(marshal(t, &pb.LlmCacheBlob{StateSchemaVersion: 1}), unknown...), statecodec.CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Clone().Proto().ProtoReflect().GetUnknown(); !bytes.Equal(got, unknown) {
		t.Fatalf("the clone's unknown fields are %x, want %x", got, unknown)
	}
}
