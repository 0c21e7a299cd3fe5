package statecodec_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/beamagents/beamagents/statecodec"
)

func TestStats(t *testing.T) {
	var s statecodec.Stats
	s.Add(statecodec.Stats{Migrated: 1, Evictions: 2, EvictedBytes: 10})
	s.Add(statecodec.Stats{Evictions: 1, CorruptEntries: 4})
	if s != (statecodec.Stats{Migrated: 1, Evictions: 3, EvictedBytes: 10, CorruptEntries: 4}) {
		t.Fatalf("Add = %+v", s)
	}
	var got []string
	for name, n := range s.All() {
		got = append(got, fmt.Sprintf("%s=%d", name, n))
	}
	if want := []string{"migrated=1", "evictions=3", "evicted_bytes=10", "corrupt_entries=4"}; !slices.Equal(got, want) {
		t.Fatalf("All = %v, want %v", got, want)
	}
	all := statecodec.Stats{1, 2, 3, 4, 5, 6, 7, 8, 9}
	var names []string
	for name := range all.All() {
		names = append(names, name)
		if len(names) == 2 {
			break
		}
	}
	if !slices.Equal(names, []string{"migrated", "pre_versioned"}) {
		t.Fatalf("All did not stop when asked: %v", names)
	}
}
