package statecodec

import (
	"bytes"
	"iter"
	"slices"
	"unicode/utf8"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func (m *Memory) find(key string) int {
	for i, e := range m.blob.Entries {
		if e.GetKey() == key {
			return i
		}
	}
	return -1
}

// touch makes entry i the most recently used. last_access_ms takes the event time but never
// moves backwards: events may arrive out of event-time order, and entry order, not the
// timestamp, is the LRU order.
func (m *Memory) touch(i int, atMs int64) *pb.MemoryEntry {
	e := touchEntry(&m.owned, &m.blob.Entries, i)
	e.LastAccessMs = max(e.LastAccessMs, atMs)
	return e
}

// Get returns a copy of key's value and makes the entry the most recently used at event time
// atMs (the element's or timer's event time, never the wall clock).
func (m *Memory) Get(key string, atMs int64) ([]byte, bool) {
	i := m.find(key)
	if i < 0 {
		return nil, false
	}
	return bytes.Clone(m.touch(i, atMs).GetValue()), true
}

// Peek returns a copy of key's value without changing the LRU order (for read-only paths).
func (m *Memory) Peek(key string) ([]byte, bool) {
	i := m.find(key)
	if i < 0 {
		return nil, false
	}
	return bytes.Clone(m.blob.Entries[i].GetValue()), true
}

// Put stores a copy of value under key as the most recently used entry at event time atMs,
// then evicts least recently used entries until both caps hold. The new entry itself is never
// evicted. A key that is not valid UTF-8 gives [ErrInvalidArgument] and a value larger than
// MaxValueBytes gives [ErrTooLarge]; either way nothing changes.
func (m *Memory) Put(key string, value []byte, atMs int64) error {
	if !utf8.ValidString(key) {
		return invalid(CellMemory, "key is not valid UTF-8")
	}
	if int64(len(value)) > m.opts.MaxValueBytes {
		return &Error{Code: CodeTooLarge, Cell: CellMemory, Detail: "value larger than the memory cap"}
	}
	if i := m.find(key); i >= 0 {
		e := m.touch(i, atMs)
		m.blob.TotalValueBytes += int64(len(value)) - int64(len(e.GetValue()))
		e.Value = bytes.Clone(value)
	} else {
		e := &pb.MemoryEntry{Key: key, Value: bytes.Clone(value), LastAccessMs: atMs}
		ownList(&m.owned, &m.blob.Entries)
		m.blob.Entries = append(m.blob.Entries, e)
		m.blob.TotalValueBytes += int64(len(value))
	}
	m.evict()
	return nil
}

// Delete removes key and reports whether it was present.
func (m *Memory) Delete(key string) bool {
	i := m.find(key)
	if i < 0 {
		return false
	}
	m.blob.TotalValueBytes -= int64(len(m.blob.Entries[i].GetValue()))
	ownList(&m.owned, &m.blob.Entries)
	m.blob.Entries = slices.Delete(m.blob.Entries, i, i+1)
	m.owned.removed(i)
	return true
}

// All yields every key with a copy of its value, least recently used first, without changing
// the LRU order.
func (m *Memory) All() iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, e := range m.blob.Entries {
			if !yield(e.GetKey(), bytes.Clone(e.GetValue())) {
				return
			}
		}
	}
}
