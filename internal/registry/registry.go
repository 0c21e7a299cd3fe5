package registry

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// Registry holds objects of type T by id in this process.
type Registry[T any] struct {
	mu      sync.Mutex
	entries map[string]*entry[T]
}

type entry[T any] struct {
	v    T
	refs int
}

// Add registers v under a new random id (16 hex digits) and returns the id.
func (r *Registry[T]) Add(v T) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		b := make([]byte, 8)
		rand.Read(b)
		id := hex.EncodeToString(b)
		if _, taken := r.entries[id]; !taken {
			r.put(id, &entry[T]{v: v, refs: 1})
			return id
		}
	}
}

// Lookup returns the object registered under id; ok is false for none.
func (r *Registry[T]) Lookup(id string) (v T, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[id]
	if !ok {
		return v, false
	}
	return e.v, true
}

// Remove drops id, whatever its references.
func (r *Registry[T]) Remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, id)
}

// Acquire returns the object registered under name, made by create on first use, and counts a
// reference to it: each Acquire is matched by one Release.
func (r *Registry[T]) Acquire(name string, create func() (T, error)) (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.entries[name]; ok {
		e.refs++
		return e.v, nil
	}
	v, err := create()
	if err != nil {
		return v, err
	}
	r.put(name, &entry[T]{v: v, refs: 1})
	return v, nil
}

// Release drops a reference taken by Acquire; the last one removes name.
func (r *Registry[T]) Release(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.entries[name]; ok {
		if e.refs--; e.refs <= 0 {
			delete(r.entries, name)
		}
	}
}

// Len is how many ids are registered.
func (r *Registry[T]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.entries)
}

func (r *Registry[T]) put(id string, e *entry[T]) {
	if r.entries == nil {
		r.entries = map[string]*entry[T]{}
	}
	r.entries[id] = e
}
