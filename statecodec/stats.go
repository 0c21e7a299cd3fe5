package statecodec

import "iter"

// Stats counts what a decoded cell value repaired, migrated, evicted or expired since it was
// decoded or created. It is plain data, so the Beam layer can turn it into counters; the names
// yielded by [Stats.All] are stable.
type Stats struct {
	Migrated          int64 // blobs upgraded from an older state_schema_version (including 0)
	PreVersioned      int64 // blobs decoded at version 0; also counted in Migrated
	TotalRepairs      int64 // stored totals recomputed, and digest-only cache entries stripped of a response
	DuplicatesDropped int64 // entries dropped because a later entry had the same key or id
	Evictions         int64 // entries evicted, least recently used first, to honour a cap
	EvictedBytes      int64 // value or response bytes those evictions removed
	Expired           int64 // cache entries dropped because their TTL had passed
	DigestOnly        int64 // cache responses too large to keep, recorded as digest only
	CorruptEntries    int64 // cache entries dropped on lookup: response and digest disagreed
}

// Add adds o to s.
func (s *Stats) Add(o Stats) {
	for i, p := range s.fields() {
		*p += *o.fields()[i]
	}
}

var statNames = [...]string{
	"migrated", "pre_versioned", "total_repairs", "duplicates_dropped",
	"evictions", "evicted_bytes", "expired", "digest_only", "corrupt_entries",
}

func (s *Stats) fields() [len(statNames)]*int64 {
	return [...]*int64{&s.Migrated, &s.PreVersioned, &s.TotalRepairs, &s.DuplicatesDropped,
		&s.Evictions, &s.EvictedBytes, &s.Expired, &s.DigestOnly, &s.CorruptEntries}
}

// All yields the non-zero counters by their stable names, in a fixed order.
func (s Stats) All() iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		for i, p := range s.fields() {
			if *p != 0 && !yield(statNames[i], *p) {
				return
			}
		}
	}
}
