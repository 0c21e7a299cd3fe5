package agent

import (
	"encoding/binary"
	"strconv"

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
