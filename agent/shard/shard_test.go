package shard_test

import (
	"bytes"
	"testing"

	"github.com/beamagents/beamagents/agent/shard"
)

// The shard of an envelope is a function of its bytes and n alone, pinned here: a change
// would move events of running entities to other sub-keys.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		envelope string
		n, want  int
	}{
		{"", 1, 0},
		{"", 0, 0},
		{"", 64, 20},
		{"a", 64, 10},
		{"a", 2, 0},
		{"event 1", 64, 62},
		{"event 2", 64, 1},
		{"event 2", 7, 2},
	} {
		if got := shard.Of([]byte(tc.envelope), tc.n); got != tc.want {
			t.Errorf("Of(%q, %d) = %d, want %d", tc.envelope, tc.n, got, tc.want)
		}
		if again := shard.Of([]byte(tc.envelope), tc.n); again != tc.want {
			t.Errorf("Of(%q, %d) changed between calls", tc.envelope, tc.n)
		}
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		key    string
		n      int
		entity string
		shard  int
		ok     bool
	}{
		{"device-1#s3", 64, "device-1", 3, true},
		{"device-1#s0", 2, "device-1", 0, true},
		{"a#s1#s12", 64, "a#s1", 12, true},
		{"#s5", 8, "", 5, true},
		{"device-1#s64", 64, "device-1#s64", 0, false}, // not below n
		{"device-1#s03", 64, "device-1#s03", 0, false}, // not Key's decimal
		{"device-1#s-1", 64, "device-1#s-1", 0, false},
		{"device-1#s", 64, "device-1#s", 0, false},
		{"device-1#s3", 1, "device-1#s3", 0, false}, // not sharded
		{"device-1", 64, "device-1", 0, false},
	} {
		entity, i, ok := shard.Split([]byte(tc.key), tc.n)
		if string(entity) != tc.entity || i != tc.shard || ok != tc.ok {
			t.Errorf("Split(%q, %d) = %q, %d, %v; want %q, %d, %v", tc.key, tc.n, entity, i, ok, tc.entity, tc.shard, tc.ok)
		}
		if ok {
			if back := shard.Key(entity, i); string(back) != tc.key {
				t.Errorf("Key(%q, %d) = %q, want %q", entity, i, back, tc.key)
			}
		}
	}
}

// FuzzSplit: whatever the key, a sub-key Split accepts is Key of what it returns, and the
// sub-key of any entity and shard below n splits back to them.
func FuzzSplit(f *testing.F) {
	f.Add([]byte("device-1#s3"), 64)
	f.Add([]byte("a#s1#s012"), 8)
	f.Add([]byte(""), 0)
	f.Fuzz(func(t *testing.T, key []byte, n int) {
		n %= 2 * shard.Max
		entity, i, ok := shard.Split(key, n)
		if !ok {
			if !bytes.Equal(entity, key) || i != 0 {
				t.Fatalf("Split(%q, %d) refused but returned %q, %d", key, n, entity, i)
			}
		} else if i < 0 || i >= n || !bytes.Equal(shard.Key(entity, i), key) {
			t.Fatalf("Split(%q, %d) = %q, %d: not Key's form", key, n, entity, i)
		}
		if n > 1 {
			j := shard.Of(key, n)
			back, got, ok := shard.Split(shard.Key(key, j), n)
			if !ok || got != j || !bytes.Equal(back, key) {
				t.Fatalf("Split(Key(%q, %d), %d) = %q, %d, %v", key, j, n, back, got, ok)
			}
		}
	})
}
