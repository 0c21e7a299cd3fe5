package statecodec_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// decodeErrorNamesCell fails unless err is a typed decode error naming cell.
func decodeErrorNamesCell(t *testing.T, err error, cell statecodec.Cell) {
	t.Helper()
	var se *statecodec.Error
	if !errors.As(err, &se) || se.Cell != cell {
		t.Fatalf("untyped decode error %v", err)
	}
	switch se.Code {
	case statecodec.CodeCorrupt, statecodec.CodeFutureVersion:
	default:
		t.Fatalf("decode error with code %s", se.Code)
	}
}

func addGoldenSeeds(f *testing.F, names ...string) {
	for _, n := range names {
		f.Add(golden(f, n))
	}
	f.Add([]byte{})
	f.Add([]byte{0x12, 0x00})
	f.Add([]byte{0x08, 0x02})
	f.Add([]byte{0x08, 0x01, 0x18, 0x63})
	f.Add(withUnknown([]byte{0x08, 0x01}))
}

// FuzzDecodeMemory: arbitrary bytes never panic; what decodes satisfies every invariant, and
// encode → decode is a fixpoint (same value, nothing left to repair, same bytes).
func FuzzDecodeMemory(f *testing.F) {
	addGoldenSeeds(f, "memory_blob.binpb")
	opts := statecodec.MemoryOptions{MaxValueBytes: 64, MaxEntries: 4}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := statecodec.DecodeMemory(b, opts)
		if err != nil {
			decodeErrorNamesCell(t, err, statecodec.CellMemory)
			return
		}
		checkMemoryInvariants(t, m)
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := statecodec.DecodeMemory(enc, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(m.Proto(), back.Proto()) || back.Stats() != (statecodec.Stats{}) {
			t.Fatalf("round trip changed the value or found repairs: %+v", back.Stats())
		}
		if again, _ := back.Encode(); !bytes.Equal(enc, again) {
			t.Fatal("encoding is not deterministic")
		}
	})
}

// FuzzDecodeCache: as FuzzDecodeMemory, for the replay cache.
func FuzzDecodeCache(f *testing.F) {
	addGoldenSeeds(f, "llm_cache_blob.binpb", "llm_cache_blob_digest_only.binpb")
	opts := statecodec.CacheOptions{MaxResponseBytes: 16, MaxEntries: 3}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := statecodec.DecodeCache(b, opts)
		if err != nil {
			decodeErrorNamesCell(t, err, statecodec.CellLLMCache)
			return
		}
		checkCacheInvariants(t, c)
		enc, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := statecodec.DecodeCache(enc, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(c.Proto(), back.Proto()) || back.Stats() != (statecodec.Stats{}) {
			t.Fatalf("round trip changed the value or found repairs: %+v", back.Stats())
		}
		if again, _ := back.Encode(); !bytes.Equal(enc, again) {
			t.Fatal("encoding is not deterministic")
		}
	})
}

// FuzzDecodeContinuation: arbitrary bytes never panic; encode → decode is a fixpoint.
func FuzzDecodeContinuation(f *testing.F) {
	addGoldenSeeds(f, "continuation.binpb", "continuation_escalations.binpb", "continuation_handler_journal.binpb")
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := statecodec.DecodeContinuation(b)
		if err != nil {
			decodeErrorNamesCell(t, err, statecodec.CellContinuation)
			return
		}
		enc, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := statecodec.DecodeContinuation(enc)
		if err != nil {
			t.Fatal(err)
		}
		if (c == nil) != (back == nil) || (c != nil && (!proto.Equal(c.Proto(), back.Proto()) || back.Stats() != statecodec.Stats{})) {
			t.Fatal("round trip changed the value")
		}
	})
}

// FuzzDecodePending: arbitrary bytes never panic; encode → decode is a fixpoint.
func FuzzDecodePending(f *testing.F) {
	f.Add([]byte{})
	f.Add(protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), golden(f, "tool_intent_signed.binpb")))
	f.Add([]byte{0x0a, 0x05, 0x0a, 0x03, 'i', '-', '1', 0x0a, 0x05, 0x0a, 0x03, 'i', '-', '1'})
	f.Add(withUnknown(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := statecodec.DecodePending(b)
		if err != nil {
			decodeErrorNamesCell(t, err, statecodec.CellPending)
			return
		}
		enc, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := statecodec.DecodePending(enc)
		if err != nil {
			t.Fatal(err)
		}
		again, err := back.Encode()
		if err != nil || !bytes.Equal(enc, again) || back.Stats() != (statecodec.Stats{}) {
			t.Fatalf("round trip changed the cell (%v)", err)
		}
	})
}

// FuzzDecodeSeq: arbitrary bytes never panic; every decoded seq re-encodes to itself.
func FuzzDecodeSeq(f *testing.F) {
	for _, s := range [][]byte{{}, {0x08, 0x01}, {0x08, 0xff, 0x01}, {0x10, 0x01}, {0x08, 0x01, 0x08, 0x02}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, err := statecodec.DecodeSeq(b)
		if err != nil {
			decodeErrorNamesCell(t, err, statecodec.CellSeq)
			return
		}
		enc, err := statecodec.EncodeSeq(seq)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := statecodec.DecodeSeq(enc); back != seq || err != nil {
			t.Fatalf("seq %d round trips to %d, %v", seq, back, err)
		}
	})
}

// memModel is the reference LRU the fuzzer compares Memory against.
type memModel struct {
	entries    []*pb.MemoryEntry
	maxBytes   int64
	maxEntries int
}

func (mm *memModel) index(k string) int {
	return slices.IndexFunc(mm.entries, func(e *pb.MemoryEntry) bool { return e.Key == k })
}

func (mm *memModel) touch(i int, at int64) *pb.MemoryEntry {
	e := mm.entries[i]
	mm.entries = append(slices.Delete(mm.entries, i, i+1), e)
	e.LastAccessMs = max(e.LastAccessMs, at)
	return e
}

func (mm *memModel) put(k string, v []byte, at int64) {
	if int64(len(v)) > mm.maxBytes {
		return
	}
	if i := mm.index(k); i >= 0 {
		mm.touch(i, at).Value = v
	} else {
		mm.entries = append(mm.entries, &pb.MemoryEntry{Key: k, Value: v, LastAccessMs: at})
	}
	for len(mm.entries) > mm.maxEntries || sumValues(mm.entries) > mm.maxBytes {
		mm.entries = mm.entries[1:]
	}
}

// FuzzMemoryOperations drives Memory with an arbitrary operation stream and compares it, after
// every operation, with a naive reference LRU.
func FuzzMemoryOperations(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 9, 1, 1, 0, 2, 2, 0, 0, 3, 40})
	f.Add(bytes.Repeat([]byte{0, 7, 20, 1, 3, 0}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		opts := statecodec.MemoryOptions{MaxValueBytes: 48, MaxEntries: 4}
		m := statecodec.NewMemory(opts)
		ref := &memModel{maxBytes: 48, maxEntries: 4}
		var at int64
		for i := 0; i+2 < len(ops); i += 3 {
			key := fmt.Sprintf("k%d", ops[i+1]%7)
			at += int64(ops[i+2]%5) - 1 // event time mostly advances, sometimes goes back
			switch ops[i] % 3 {
			case 0:
				v := bytes.Repeat([]byte{ops[i+1]}, int(ops[i+2]%60))
				err := m.Put(key, v, at)
				if (err != nil) != (len(v) > 48) {
					t.Fatalf("Put(%d bytes) = %v", len(v), err)
				}
				ref.put(key, bytes.Clone(v), at)
			case 1:
				_, ok := m.Get(key, at)
				j := ref.index(key)
				if ok != (j >= 0) {
					t.Fatalf("Get(%s) found %v", key, ok)
				}
				if ok {
					ref.touch(j, at)
				}
			case 2:
				if ok := m.Delete(key); ok != (ref.index(key) >= 0) {
					t.Fatalf("Delete(%s) = %v", key, ok)
				} else if ok {
					ref.entries = slices.Delete(ref.entries, ref.index(key), ref.index(key)+1)
				}
			}
			checkMemoryInvariants(t, m)
			want := &pb.MemoryBlob{StateSchemaVersion: 1, Entries: ref.entries, TotalValueBytes: sumValues(ref.entries)}
			if !proto.Equal(want, m.Proto()) {
				t.Fatalf("after op %d: memory differs from the reference", i/3)
			}
		}
	})
}

// cacheModel is the reference replay cache the fuzzer compares Cache against (times stay small,
// so plain arithmetic is exact).
type cacheModel struct {
	entries    []*pb.LlmCacheEntry
	ttl        int64
	maxBytes   int64
	maxEntries int
}

func (cm *cacheModel) expire(at int64) {
	cm.entries = slices.DeleteFunc(cm.entries, func(e *pb.LlmCacheEntry) bool { return at-e.CreatedAtMs >= cm.ttl })
}

func (cm *cacheModel) index(k string) int {
	return slices.IndexFunc(cm.entries, func(e *pb.LlmCacheEntry) bool { return e.CacheKey == k })
}

func (cm *cacheModel) touch(i int, at int64) *pb.LlmCacheEntry {
	e := cm.entries[i]
	cm.entries = append(slices.Delete(cm.entries, i, i+1), e)
	e.LastAccessMs = max(e.LastAccessMs, at)
	return e
}

func (cm *cacheModel) store(k string, r []byte, at int64) {
	cm.expire(at)
	d := sha256.Sum256(r)
	var e *pb.LlmCacheEntry
	if i := cm.index(k); i >= 0 {
		e = cm.touch(i, at)
		if !bytes.Equal(e.ResponseDigest, d[:]) {
			e.CreatedAtMs = at
		}
	} else {
		e = &pb.LlmCacheEntry{CacheKey: k, CreatedAtMs: at, LastAccessMs: at}
		cm.entries = append(cm.entries, e)
	}
	e.Response, e.ResponseDigest, e.DigestOnly = r, d[:], false
	if int64(len(r)) > cm.maxBytes {
		e.Response, e.DigestOnly = nil, true
	}
	for len(cm.entries) > cm.maxEntries || sumResponses(cm.entries) > cm.maxBytes {
		cm.entries = cm.entries[1:]
	}
}

// FuzzCacheOperations drives Cache with an arbitrary operation stream and compares it, after
// every operation, with a naive reference cache.
func FuzzCacheOperations(f *testing.F) {
	f.Add([]byte{0, 1, 5, 0, 2, 9, 1, 1, 0, 0, 1, 30, 1, 1, 200})
	f.Add(bytes.Repeat([]byte{0, 7, 20, 1, 3, 90}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := statecodec.NewCache(statecodec.CacheOptions{MaxEntries: 3, MaxResponseBytes: 24, TTL: 500 * time.Millisecond})
		ref := &cacheModel{ttl: 500, maxBytes: 24, maxEntries: 3}
		var at int64
		for i := 0; i+2 < len(ops); i += 3 {
			key := cacheKey(fmt.Sprint(ops[i+1] % 5))
			at += int64(ops[i+2]) - 40
			if ops[i]%2 == 0 {
				r := bytes.Repeat([]byte{ops[i+1] % 3}, int(ops[i+2]%32))
				do, err := c.Store(key, r, at)
				if err != nil || do != (len(r) > 24) {
					t.Fatalf("Store(%d bytes) = %v, %v", len(r), do, err)
				}
				ref.store(key, bytes.Clone(r), at)
			} else {
				l, err := c.Lookup(key, at)
				if err != nil {
					t.Fatal(err)
				}
				ref.expire(at)
				want := statecodec.Miss
				if j := ref.index(key); j >= 0 {
					want = statecodec.Hit
					if ref.touch(j, at).DigestOnly {
						want = statecodec.DigestOnlyHit
					}
				}
				if l.Status != want {
					t.Fatalf("Lookup = %v, want %v", l.Status, want)
				}
			}
			checkCacheInvariants(t, c)
			want := &pb.LlmCacheBlob{StateSchemaVersion: 1, Entries: ref.entries, TotalResponseBytes: sumResponses(ref.entries)}
			if !proto.Equal(want, c.Proto()) {
				t.Fatalf("after op %d: cache differs from the reference", i/3)
			}
		}
	})
}
