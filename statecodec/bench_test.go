package statecodec_test

import (
	"fmt"
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

var benchSizesKiB = []int{1, 16, 64, 100}

// memoryCell returns a committed memory cell holding kib KiB of values in 1 KiB entries (one
// smaller entry for 1 KiB), the shape a full working memory has.
func memoryCell(b *testing.B, kib int) []byte {
	m := statecodec.NewMemory(statecodec.MemoryOptions{})
	for i := range kib {
		if err := m.Put(fmt.Sprintf("memory/key-%04d", i), make([]byte, 1024), t0+int64(i)); err != nil {
			b.Fatal(err)
		}
	}
	out, err := m.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// cacheCell returns a committed cache cell holding kib KiB of responses in 1 KiB entries.
func cacheCell(b *testing.B, kib int, opts statecodec.CacheOptions) []byte {
	c := statecodec.NewCache(opts)
	for i := range kib {
		if _, err := c.Store(cacheKey(fmt.Sprint(i)), make([]byte, 1024), t0+int64(i)); err != nil {
			b.Fatal(err)
		}
	}
	out, err := c.Encode()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkCellDecodeEncode measures one state cell's read-modify-write codec cost: decode
// (parse, version check, migrate, verify) and encode, at 1, 16, 64 and 100 KiB.
func BenchmarkCellDecodeEncode(b *testing.B) {
	for _, kib := range benchSizesKiB {
		b.Run(fmt.Sprintf("memory/%dKiB", kib), func(b *testing.B) {
			cell := memoryCell(b, kib)
			b.SetBytes(int64(len(cell)))
			b.ReportAllocs()
			for b.Loop() {
				m, err := statecodec.DecodeMemory(cell, statecodec.MemoryOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	opts := statecodec.CacheOptions{MaxEntries: 128}
	for _, kib := range benchSizesKiB {
		b.Run(fmt.Sprintf("llm_cache/%dKiB", kib), func(b *testing.B) {
			cell := cacheCell(b, kib, opts)
			b.SetBytes(int64(len(cell)))
			b.ReportAllocs()
			for b.Loop() {
				c, err := statecodec.DecodeCache(cell, opts)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCellEncode measures encode alone, the figure the Python runtime publishes for
// 100 KiB.
func BenchmarkCellEncode(b *testing.B) {
	for _, kib := range benchSizesKiB {
		b.Run(fmt.Sprintf("memory/%dKiB", kib), func(b *testing.B) {
			m, err := statecodec.DecodeMemory(memoryCell(b, kib), statecodec.MemoryOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemoryPutEvictAtCap measures one Put into a memory at its default 100 KiB cap: each
// put stores a new 1 KiB value and evicts exactly one least recently used entry.
func BenchmarkMemoryPutEvictAtCap(b *testing.B) {
	m, err := statecodec.DecodeMemory(memoryCell(b, 100), statecodec.MemoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	// 200 keys cycled over a memory of 100: every put is of a key that was evicted.
	keys := make([]string, 200)
	for i := range keys {
		keys[i] = fmt.Sprintf("memory/key-%04d", (i+100)%200)
	}
	value := make([]byte, 1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := m.Put(keys[i%200], value, t0+int64(i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if m.Stats().Evictions != int64(i) {
		b.Fatalf("%d puts evicted %d entries", i, m.Stats().Evictions)
	}
}

// BenchmarkStateCommit measures the codec share of one activation's commit: decode every cell
// of a key (seq, 64 KiB of memory, 16 KiB of cache, a continuation, two pending intents), one
// memory put, one cache lookup and store, and encode every cell again.
func BenchmarkStateCommit(b *testing.B) {
	seqCell, _ := statecodec.EncodeSeq(41)
	memCell := memoryCell(b, 64)
	cacheCellBytes := cacheCell(b, 16, statecodec.CacheOptions{})
	cont, err := statecodec.Suspend(suspension())
	if err != nil {
		b.Fatal(err)
	}
	contCell, _ := cont.Encode()
	p := statecodec.NewPending()
	for _, id := range []string{"i-1", "i-2"} {
		if err := p.Add(&pb.ToolIntent{IntentId: id, EntityKey: []byte("customer-0042"), Seq: 7, ToolName: "refund", ArgsJson: `{"amount":"12"}`}); err != nil {
			b.Fatal(err)
		}
	}
	pendingCell, _ := p.Encode()
	value, key := make([]byte, 512), cacheKey("request")
	b.ReportAllocs()
	for b.Loop() {
		seq, err := statecodec.DecodeSeq(seqCell)
		check(b, err)
		mem, err := statecodec.DecodeMemory(memCell, statecodec.MemoryOptions{})
		check(b, err)
		cache, err := statecodec.DecodeCache(cacheCellBytes, statecodec.CacheOptions{})
		check(b, err)
		c, err := statecodec.DecodeContinuation(contCell)
		check(b, err)
		pend, err := statecodec.DecodePending(pendingCell)
		check(b, err)

		check(b, mem.Put("last_reply", value, t0))
		_, err = cache.Lookup(key, t0)
		check(b, err)
		_, err = cache.Store(key, value, t0)
		check(b, err)
		c.Resolve("i-1")
		pend.Remove("i-1")

		_, err = statecodec.EncodeSeq(seq + 1)
		check(b, err)
		_, err = mem.Encode()
		check(b, err)
		_, err = cache.Encode()
		check(b, err)
		_, err = c.Encode()
		check(b, err)
		_, err = pend.Encode()
		check(b, err)
	}
}

func check(b *testing.B, err error) {
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCacheStoreLookupClone measures the replay-cache share of one driver activation on a
// full cache (64 entries of 400-byte responses): clone the kept value, look up a key never
// seen (a miss), store the model's answer under it, which evicts the least recently used
// entry; and clone a working memory of 8 entries, as every activation also does.
func BenchmarkCacheStoreLookupClone(b *testing.B) {
	c := statecodec.NewCache(statecodec.CacheOptions{})
	response := make([]byte, 400)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = cacheKey(fmt.Sprint("request ", i))
	}
	for i := range statecodec.DefaultCacheMaxEntries {
		if _, err := c.Store(cacheKey(fmt.Sprint("warm ", i)), response, t0); err != nil {
			b.Fatal(err)
		}
	}
	m := statecodec.NewMemory(statecodec.MemoryOptions{})
	for i := range 8 {
		check(b, m.Put(fmt.Sprint("memory/", i), response[:64], t0))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m = m.Clone()
		c = c.Clone()
		key := keys[i%len(keys)]
		lk, err := c.Lookup(key, t0+int64(i))
		check(b, err)
		if lk.Status != statecodec.Miss {
			b.Fatalf("lookup %d: %v", i, lk.Status)
		}
		_, err = c.Store(key, response, t0+int64(i))
		check(b, err)
		i++
	}
}
