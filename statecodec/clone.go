package statecodec

import (
	"bytes"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// shared is the copy-on-write bookkeeping of a value whose entry list and entries may be
// shared with a clone. Cloning shares both; the value copies the list before it first changes
// it (ownList), and an entry before it changes it. It changes an entry only through
// touchEntry, which replaces a shared entry with a copy of its own and moves it to the back,
// and the entries it creates are appended at the back; removals keep the order of the others.
// So the entries it may share are always a prefix of its list, and their count is all it
// keeps.
type shared struct {
	list bool // the list is shared: copy it before changing it
	n    int  // entries[:n] may be shared
}

// ownList makes *entries a list of the value's own, which it may change in place. The copy
// has room for one more entry (the next store).
func ownList[E any](s *shared, entries *[]E) {
	if s.list {
		// make then copy, as written, is one runtime call that knows the new list is empty:
		// it spares the write barriers on the old contents of the destination.
		old := *entries
		l := make([]E, len(old)+1)
		copy(l, old)
		*entries = l[:len(old)]
		s.list = false
	}
}

// touchEntry returns entry i of *entries, first replacing it with a copy of its own when it
// may be shared, and moves it to the back (the most recently used).
func touchEntry[E proto.Message](s *shared, entries *[]E, i int) E {
	ownList(s, entries)
	e := (*entries)[i]
	if i < s.n {
		e = proto.CloneOf(e)
		(*entries)[i] = e
		s.n--
	}
	moveToBack(*entries, i)
	return e
}

// removed records that entry i was removed from the list.
func (s *shared) removed(i int) {
	if i < s.n {
		s.n--
	}
}

// evicted records that the first k entries were removed from the list.
func (s *shared) evicted(k int) { s.n = max(0, s.n-k) }

// copyUnknown gives dst a copy of the unknown fields of src, which a blob keeps verbatim.
func copyUnknown(dst, src proto.Message) {
	if u := src.ProtoReflect().GetUnknown(); len(u) > 0 {
		dst.ProtoReflect().SetUnknown(bytes.Clone(u))
	}
}

// memoryClone and cacheClone are a clone and its blob, made in one allocation.
type memoryClone struct {
	Memory
	b pb.MemoryBlob
}

type cacheClone struct {
	Cache
	b pb.LlmCacheBlob
}

// Clone returns a copy of m, the same entries in the same order, with no stats. The two share
// the entry list and the entries until one of them changes the list or an entry, which it then
// copies first: cloning costs the same whatever the number of entries, a change costs at most
// one pointer per entry more, and changing m never shows in the clone or the other way round.
func (m *Memory) Clone() *Memory {
	m.owned = shared{list: true, n: len(m.blob.Entries)}
	c := &memoryClone{Memory: *m} // every setting of m
	// Field by field rather than proto.Clone, which would cost more than the rest of the
	// clone; a test checks that these are all the blob's fields.
	c.b.StateSchemaVersion, c.b.Entries, c.b.TotalValueBytes = m.blob.StateSchemaVersion, m.blob.Entries, m.blob.TotalValueBytes
	copyUnknown(&c.b, m.blob)
	c.blob, c.stats = &c.b, Stats{}
	return &c.Memory
}

// Clone returns a copy of c, the same entries in the same order, with no stats (see
// [Memory.Clone]).
func (c *Cache) Clone() *Cache {
	c.owned = shared{list: true, n: len(c.blob.Entries)}
	n := &cacheClone{Cache: *c} // every setting of c
	n.b.StateSchemaVersion, n.b.Entries, n.b.TotalResponseBytes = c.blob.StateSchemaVersion, c.blob.Entries, c.blob.TotalResponseBytes
	copyUnknown(&n.b, c.blob)
	n.blob, n.stats = &n.b, Stats{}
	return &n.Cache
}
