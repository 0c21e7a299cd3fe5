package registry_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/beamagents/beamagents/internal/registry"
)

func TestAddLookupRemove(t *testing.T) {
	var r registry.Registry[*int]
	v := new(int)
	id := r.Add(v)
	if got, ok := r.Lookup(id); !ok || got != v || len(id) != 16 {
		t.Fatalf("id %q: %v %v", id, got, ok)
	}
	if _, ok := r.Lookup(""); ok {
		t.Fatal("the empty id names something")
	}
	if other := r.Add(new(int)); other == id {
		t.Fatal("an id in use was drawn again")
	}
	r.Remove(id)
	if _, ok := r.Lookup(id); ok || r.Len() != 1 {
		t.Fatalf("removed id still registered (%d held)", r.Len())
	}
}

func TestAcquireRelease(t *testing.T) {
	var r registry.Registry[*int]
	made := 0
	mk := func() (*int, error) { made++; return new(int), nil }
	a, _ := r.Acquire("step", mk)
	b, _ := r.Acquire("step", mk)
	if a != b || made != 1 {
		t.Fatalf("two holders of one name got %p %p (%d made)", a, b, made)
	}
	r.Release("step")
	if _, ok := r.Lookup("step"); !ok {
		t.Fatal("released with a holder left")
	}
	r.Release("step")
	if _, ok := r.Lookup("step"); ok {
		t.Fatal("the last release kept it")
	}
	if _, err := r.Acquire("bad", func() (*int, error) { return nil, errors.New("no") }); err == nil || r.Len() != 0 {
		t.Fatal("a failed make registered something")
	}
}

func TestConcurrent(t *testing.T) {
	var r registry.Registry[int]
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := r.Add(i)
			if v, ok := r.Lookup(id); !ok || v != i {
				t.Errorf("lookup %d: %v %v", i, v, ok)
			}
			r.Remove(id)
		}()
	}
	wg.Wait()
	if r.Len() != 0 {
		t.Fatalf("%d left", r.Len())
	}
}
