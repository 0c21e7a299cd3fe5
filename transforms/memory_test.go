package transforms

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/ltm"
)

// Options.Check refuses a memory store reference of no known form, never opening it.
func TestOptionsCheckMemoryStore(t *testing.T) {
	for _, tc := range []struct {
		ref string
		ok  bool
	}{
		{"", true},
		{"sqlite:" + filepath.Join(t.TempDir(), "m.db"), true},
		{"redis://127.0.0.1:1/0", true},
		{"env:BEAMAGENTS_MEMORY", true},
		{"memory", false},
		{"sqlite:", false},
	} {
		err := Options{Agent: support.Name, AllowUnsignedIntents: true, MemoryStore: tc.ref}.Check()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ltm.ErrRef)) {
			t.Errorf("MemoryStore %q: Check() = %v, want ok %v", tc.ref, err, tc.ok)
		}
	}
}

// The instances of a process share one store per reference, whether given itself or behind
// a secret reference; the last release closes it.
func TestMemoryStoreShared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	t.Setenv("BEAMAGENTS_TEST_MEMORY", "sqlite:"+path)
	ctx := context.Background()
	a, refA, err := acquireMemory(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	b, refB, err := acquireMemory(ctx, "env:BEAMAGENTS_TEST_MEMORY")
	if err != nil {
		t.Fatal(err)
	}
	if a != b || refA != refB {
		t.Fatalf("two stores (%v, %v) for one reference", a, b)
	}
	releaseMemory(refA)
	if err := b.Put(ctx, ltm.Entry{Entity: []byte("k"), Namespace: "n", Key: "k", Value: []byte("v")}); err != nil {
		t.Fatalf("the store closed while used: %v", err)
	}
	releaseMemory(refB)
	if _, _, err := b.Get(ctx, []byte("k"), "n", "k"); err == nil {
		t.Fatal("the last release left the store open")
	}
	if _, _, err := acquireMemory(ctx, "env:BEAMAGENTS_TEST_UNSET"); !errors.Is(err, ltm.ErrRef) {
		t.Fatalf("an unset variable: %v, want ErrRef", err)
	}
}
