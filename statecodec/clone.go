package statecodec

import (
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// shared is the copy-on-write bookkeeping of a value whose entries may be shared with a
// clone. Until the value is cloned (or made from a clone) it owns every entry; after, it owns
// only the entries it has copied or created since, and may change only those in place.
type shared[E comparable] struct {
	cloned bool
	owned  map[E]bool
}

// own returns entry i of entries, first replacing it with a copy of its own when it may be
// shared.
func own[E interface {
	comparable
	proto.Message
}](s *shared[E], entries []E, i int) E {
	e := entries[i]
	if !s.cloned || s.owned[e] {
		return e
	}
	e = proto.CloneOf(e)
	entries[i] = e
	s.created(e)
	return e
}

// created records that the value made e itself.
func (s *shared[E]) created(e E) {
	if !s.cloned {
		return
	}
	if s.owned == nil {
		s.owned = map[E]bool{}
	}
	s.owned[e] = true
}

// cloneBlob copies blob without copying its entries: a new blob (unknown fields included),
// and a new list of the same entries with room for one more (the next store).
func cloneBlob[B proto.Message, E any](blob B, entries *[]E) (B, []E) {
	kept := *entries
	*entries = nil
	c := proto.CloneOf(blob)
	*entries = kept
	return c, append(make([]E, 0, len(kept)+1), kept...)
}

// Clone returns a copy of m, the same entries in the same order, with no stats. The two share
// the entries until one of them changes an entry, which then copies it first: cloning costs
// one pointer per entry, and changing m never shows in the clone or the other way round.
func (m *Memory) Clone() *Memory {
	blob, entries := cloneBlob(m.blob, &m.blob.Entries)
	blob.Entries = entries
	m.owned = shared[*pb.MemoryEntry]{cloned: true}
	c := *m // every setting of m
	c.blob, c.stats, c.owned = blob, Stats{}, shared[*pb.MemoryEntry]{cloned: true}
	return &c
}

// Clone returns a copy of c, the same entries in the same order, with no stats (see
// [Memory.Clone]).
func (c *Cache) Clone() *Cache {
	blob, entries := cloneBlob(c.blob, &c.blob.Entries)
	blob.Entries = entries
	c.owned = shared[*pb.LlmCacheEntry]{cloned: true}
	n := *c // every setting of c
	n.blob, n.stats, n.owned = blob, Stats{}, shared[*pb.LlmCacheEntry]{cloned: true}
	return &n
}
