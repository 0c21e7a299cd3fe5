package statecodec_test

import (
	"testing"

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
