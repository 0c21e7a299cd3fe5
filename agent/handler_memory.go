package agent

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/beamagents/beamagents/agent/internal/bind"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// Get reads the memory entry key (without moving it in the LRU order). The read is
// journaled: a resumed run sees what the first run saw, not what the run wrote since.
func (hc *Context) Get(key string) ([]byte, bool, error) {
	if err := hc.unsharded("memory read of key " + strconv.Quote(key)); err != nil {
		return nil, false, err
	}
	e, replayed, err := hc.begin(pb.JournalEntry_MEMORY_GET, key)
	if err != nil {
		return nil, false, err
	}
	if !replayed {
		val, ok := hc.act.v.memory.Peek(key)
		e.Result, e.Found = val, ok
	}
	return e.GetResult(), e.GetFound(), nil
}

// Put writes the memory entry key. It takes effect once: a resumed run does not write again.
func (hc *Context) Put(key string, value []byte) error {
	_, replayed, err := hc.begin(pb.JournalEntry_MEMORY_PUT, key, value)
	if err != nil || replayed {
		return err
	}
	return hc.put(key, value)
}

func (hc *Context) put(key string, value []byte) error {
	if err := hc.unsharded("memory write of key " + strconv.Quote(key)); err != nil {
		return err
	}
	v := hc.act.v
	v.ownMemory()
	if err := v.memory.Put(key, value, hc.act.c.now); err != nil {
		return hc.fails(fail(records.ReasonBudgetExceeded, err, "memory write of key %q", key))
	}
	v.touch(memoryCell)
	return nil
}

// Delete removes the memory entry key, once.
func (hc *Context) Delete(key string) error {
	if err := hc.unsharded("memory delete of key " + strconv.Quote(key)); err != nil {
		return err
	}
	_, replayed, err := hc.begin(pb.JournalEntry_MEMORY_DELETE, key)
	if err != nil || replayed {
		return err
	}
	v := hc.act.v
	v.ownMemory()
	if v.memory.Delete(key) {
		v.touch(memoryCell)
	}
	return nil
}

// Ring reads the bounded ring ring (see Append), oldest entry first.
func (hc *Context) Ring(ring string) ([][]byte, error) {
	b, _, err := hc.Get(ring)
	if err != nil {
		return nil, err
	}
	entries, ok := decodeRing(b)
	if !ok {
		return nil, hc.fails(fail(records.ReasonStateCorrupt, nil, "memory entry %q is not a ring", ring))
	}
	return entries, nil
}

// Append appends value to the bounded ring ring, keeping its last keep entries (keep ≥ 1).
// A ring is one memory entry named ring whose value is its entries, each a uvarint length
// and its bytes, oldest first. It takes effect once.
func (hc *Context) Append(ring string, value []byte, keep int) error {
	if keep < 1 {
		return hc.fails(fail(records.ReasonInternalPanic, nil, "ring %q: keep %d is below 1", ring, keep))
	}
	_, replayed, err := hc.begin(pb.JournalEntry_MEMORY_APPEND, ring, value, []byte(strconv.Itoa(keep)))
	if err != nil || replayed {
		return err
	}
	old, _ := hc.act.v.memory.Peek(ring)
	entries, ok := decodeRing(old)
	if !ok {
		return hc.fails(fail(records.ReasonStateCorrupt, nil, "memory entry %q is not a ring", ring))
	}
	entries = append(entries, value)
	if len(entries) > keep {
		entries = entries[len(entries)-keep:]
	}
	return hc.put(ring, encodeRing(entries))
}

func encodeRing(entries [][]byte) []byte {
	var b []byte
	for _, e := range entries {
		b = binary.AppendUvarint(b, uint64(len(e)))
		b = append(b, e...)
	}
	return b
}

// decodeRing reads encodeRing's bytes; false when b is not a ring.
func decodeRing(b []byte) ([][]byte, bool) {
	var out [][]byte
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, false
		}
		out = append(out, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return out, true
}

// room describes a write for evictions: size bytes under key (replacing its present value),
// beside an entry keep that never leaves and may grow to reserve bytes (a summary; "" for
// none). fill is the share of each of the cell's bounds, in percent, the cell may fill after
// the write once entries must leave; 0 selects 100.
type room struct {
	key           string
	size          int
	keep          string
	reserve, fill int
}

// evictions returns the least recently used entries of the memory cell (Limits.Memory) that
// must leave it before the write r: none when the write, with keep at reserve bytes, fits
// the cell's bounds; else, least recently used first and never key or keep, as many as bring
// the cell within fill percent of its bounds (all of them when that is not reachable). It is
// a journaled memory read (each entry's value included): a resumed run sees what the first
// run saw. A write that cannot fit even alone beside keep fails the activation
// (budget_exceeded). Package agent/memory's Cell calls it (bind.Run), then replace.
func (hc *Context) evictions(r room) ([]bind.MemoryItem, error) {
	if err := hc.unsharded("memory read of key " + strconv.Quote(r.key)); err != nil {
		return nil, err
	}
	e, replayed, err := hc.begin(pb.JournalEntry_MEMORY_GET, r.key, []byte("evictions"),
		[]byte(strconv.Itoa(r.size)), []byte(r.keep), []byte(strconv.Itoa(r.reserve)), []byte(strconv.Itoa(r.fill)))
	if err != nil {
		return nil, err
	}
	if !replayed {
		victims, err := hc.act.v.evictions(r)
		if err != nil {
			return nil, hc.fails(fail(records.ReasonBudgetExceeded, err, "memory write of key %q", r.key))
		}
		var slots [][]byte
		for _, v := range victims {
			slots = append(slots, []byte(v.Key), v.Value)
		}
		e.Result, e.Found = encodeRing(slots), len(victims) > 0
	}
	slots, ok := decodeRing(e.GetResult())
	if !ok || len(slots)%2 != 0 {
		return nil, hc.fails(fail(records.ReasonStateCorrupt, nil, "journaled evictions of key %q", r.key))
	}
	out := make([]bind.MemoryItem, 0, len(slots)/2)
	for i := 0; i < len(slots); i += 2 {
		out = append(out, bind.MemoryItem{Key: string(slots[i]), Value: slots[i+1]})
	}
	return out, nil
}

// replace deletes the memory entries drop, then writes puts in order, as one journaled
// operation (a memory write) that takes effect once: a compactor's write of what replaces
// the entries it folded.
func (hc *Context) replace(drop []string, puts []bind.MemoryItem) error {
	dropped := make([][]byte, len(drop))
	for i, k := range drop {
		dropped[i] = []byte(k)
	}
	args := [][]byte{encodeRing(dropped)}
	name := ""
	for i, p := range puts {
		if i == 0 {
			name = p.Key
		}
		args = append(args, []byte(p.Key), p.Value)
	}
	_, replayed, err := hc.begin(pb.JournalEntry_MEMORY_PUT, name, args...)
	if err != nil || replayed {
		return err
	}
	v := hc.act.v
	v.ownMemory()
	for _, k := range drop {
		if v.memory.Delete(k) {
			v.touch(memoryCell)
		}
	}
	for _, p := range puts {
		if err := hc.put(p.Key, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// evictions plans Context.evictions over the memory cell.
func (v *view) evictions(r room) ([]bind.MemoryItem, error) {
	o := v.memory.Options()
	bytes, entries := v.memory.TotalValueBytes(), int64(v.memory.Len())
	var lru []bind.MemoryItem
	var lruBytes int64
	for k, val := range v.memory.All() {
		if k == r.key || (r.keep != "" && k == r.keep) {
			bytes -= int64(len(val))
			entries--
			continue
		}
		lru = append(lru, bind.MemoryItem{Key: k, Value: val})
		lruBytes += int64(len(val))
	}
	bytes, entries = bytes+int64(r.size), entries+1
	if r.keep != "" {
		bytes, entries = bytes+int64(r.reserve), entries+1
	}
	fits := func(percent int64) bool {
		return bytes*100 <= o.MaxValueBytes*percent && entries*100 <= int64(o.MaxEntries)*percent
	}
	if fits(100) {
		return nil, nil
	}
	if least := bytes - lruBytes; least > o.MaxValueBytes || entries-int64(len(lru)) > int64(o.MaxEntries) {
		return nil, fmt.Errorf("%d bytes beside %d reserved for %q exceed the memory cap of %d bytes", r.size, r.reserve, r.keep, o.MaxValueBytes)
	}
	fill := int64(r.fill)
	if fill <= 0 || fill > 100 {
		fill = 100
	}
	n := 0
	for ; n < len(lru) && !fits(fill); n++ {
		bytes, entries = bytes-int64(len(lru[n].Value)), entries-1
	}
	return lru[:n], nil
}
