package statecodec

import (
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// shared is the copy-on-write bookkeeping of a value whose entries may be shared with a
// clone: the entries this value has copied (or created) since, and may change in place. A nil
// set means the value owns every entry (it was decoded or built, never cloned).
type shared[E comparable] map[E]bool

// own returns entry i of entries, first replacing it with a copy of its own when it may be
// shared.
func own[E interface {
	comparable
	proto.Message
}](s shared[E], entries []E, i int) E {
	e := entries[i]
	if s == nil || s[e] {
		return e
	}
	e = proto.CloneOf(e)
	entries[i] = e
	s[e] = true
	return e
}

// created records that the value made e itself.
func (s shared[E]) created(e E) {
	if s != nil {
		s[e] = true
	}
}

// cloneBlob copies blob without copying its entries: a new blob (unknown fields included)
// whose entry list holds the same entries.
func cloneBlob[B proto.Message, E any](blob B, entries *[]E) B {
	kept := *entries
	*entries = nil
	c := proto.CloneOf(blob)
	*entries = kept
	return c
}

// Clone returns a copy of m, the same entries in the same order, with no stats. The two share
// the entries until one of them changes an entry, which then copies it first: cloning costs
// one pointer per entry, and changing m never shows in the clone or the other way round.
func (m *Memory) Clone() *Memory {
	blob := cloneBlob(m.blob, &m.blob.Entries)
	blob.Entries = slices.Clone(m.blob.Entries)
	m.owned = shared[*pb.MemoryEntry]{}
	return &Memory{blob: blob, opts: m.opts, owned: shared[*pb.MemoryEntry]{}}
}

// Clone returns a copy of c, the same entries in the same order, with no stats (see
// [Memory.Clone]).
func (c *Cache) Clone() *Cache {
	blob := cloneBlob(c.blob, &c.blob.Entries)
	blob.Entries = slices.Clone(c.blob.Entries)
	c.owned = shared[*pb.LlmCacheEntry]{}
	return &Cache{blob: blob, opts: c.opts, ttlMs: c.ttlMs, owned: shared[*pb.LlmCacheEntry]{}}
}
