package agent

import (
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

// A key's working memory and replay cache are its two large cells, and nearly every
// activation reads and rewrites the cache. Decoding them from bytes for every input of a
// batch, and encoding them after every input, would cost more than the rest of an activation,
// so a batch keeps their decoded values beside the bytes (liveCells) and hands each view a
// clone (statecodec's Clone shares the entries until one changes): a failed activation changes
// only its clone, so the kept value stays exactly the committed state. A kept value is
// equivalent to its bytes: decoding the encoding of a value the codecs hold within their
// caps gives the same value back, which is what the inputs run one by one would see.

// liveValue is a decoded cell value that a batch can keep: *statecodec.Memory or
// *statecodec.Cache.
type liveValue interface {
	Encode() ([]byte, error)
}

// liveCells are the decoded values kept beside a set of cell bytes.
type liveCells struct {
	vals [numCells]liveValue
	// stale marks the cells whose bytes are older than their value: with deferred encoding a
	// committed value is encoded only when its bytes are asked for.
	stale cellSet
}

// reusable reports whether a cell's decoded value is kept between inputs.
func reusable(c cell) bool { return c == memoryCell || c == cacheCell }

func (l *liveCells) set(c cell, v liveValue, stale bool) {
	l.vals[c] = v
	l.stale &^= 1 << c
	if stale {
		l.stale = l.stale.with(c)
	}
}

func (l *liveCells) drop(c cell) { l.set(c, nil, false) }

// materialize encodes cell c's value into *dst when its bytes are stale.
func (l *liveCells) materialize(c cell, dst *[]byte) error {
	if !l.stale.has(c) {
		return nil
	}
	b, err := l.vals[c].Encode()
	if err != nil {
		return &Error{Reason: records.ReasonStateCorrupt, Detail: "encoding " + c.String(), Err: err}
	}
	*dst = b
	l.stale &^= 1 << c
	return nil
}

// live returns the kept value of cell c as the call sees it; nil when none is kept. Like
// initial, it counts as the call's read of a cell it has not written.
func (cs *cells) live(c cell) liveValue {
	if cs.wrote.has(c) {
		return cs.liveVals.vals[c]
	}
	v := cs.batch.live.vals[c] // kept only for a cell the batch has read or written
	if v != nil {
		cs.noteRead(c)
	}
	return v
}

// keep keeps v, just decoded from cell c's bytes as the call sees them.
func (cs *cells) keep(c cell, v liveValue) {
	if cs.wrote.has(c) {
		cs.liveVals.set(c, v, false)
		return
	}
	cs.batch.live.set(c, v, false)
}

func (cs *cells) noteRead(c cell) {
	if !cs.read.has(c) {
		cs.read = cs.read.with(c)
		if cs.reads == nil {
			cs.reads = cs.readBuf[:0]
		}
		cs.reads = append(cs.reads, cellTable[c].id)
	}
}

// loadLive gives v a clone of the kept value of cell c and reports whether there was one.
func (v *view) loadLive(c cell) bool {
	if !reusable(c) {
		return false
	}
	switch kept := v.cells.live(c).(type) {
	case *statecodec.Memory:
		// Most activations only read the memory (into the prompt): the clone waits for the
		// first write (ownMemory).
		v.memory, v.memShared = kept, true
	case *statecodec.Cache:
		v.cache = kept.Clone()
	default:
		return false
	}
	return true
}

// ownMemory makes v's memory its own before a change: a clone of the kept value it was
// reading.
func (v *view) ownMemory() {
	if v.memShared {
		v.memory, v.memShared = v.memory.Clone(), false
	}
}

// keepDecoded keeps a clone of the value of cell c that v has just decoded.
func (v *view) keepDecoded(c cell) {
	switch c {
	case memoryCell:
		v.cells.keep(c, v.memory.Clone())
	case cacheCell:
		v.cells.keep(c, v.cache.Clone())
	}
}

// value returns v's decoded value of a reusable cell.
func (v *view) value(c cell) liveValue {
	if c == memoryCell {
		return v.memory
	}
	return v.cache
}

// deferred reports whether committing cell c leaves it unencoded.
func (v *view) deferred(c cell) bool { return reusable(c) && v.cells.batch.deferred }
