package console

import (
	"context"
	"errors"
	"time"

	"github.com/beamagents/beamagents/ltm"
)

// Bounds of the long-term memory an entity page lists, and how long it waits for the store.
const (
	maxLongTermNamespaces = 20
	maxLongTermEntries    = 50
	longTermTimeout       = 3 * time.Second
)

// LongTerm is what the entity page shows of a key's long-term memory (Options.Memory).
type LongTerm struct {
	Namespaces []LongTermNamespace
	// More says the key has more namespaces than are listed.
	More bool
	// Error says why the store could not be read; what was read before is kept.
	Error string
}

// LongTermNamespace is one namespace's first entries, in key order.
type LongTermNamespace struct {
	Name    string
	Entries []ltm.Entry
	More    bool
}

// longTerm reads key's long-term memory from s: its namespaces, and the first entries of each.
// A store that fails is reported on the page, never as the page's failure: the outputs are
// still worth showing.
func longTerm(ctx context.Context, s ltm.Store, key []byte) *LongTerm {
	out := &LongTerm{}
	if len(key) > ltm.MaxEntityBytes {
		out.Error = "the key is longer than a long-term memory entity can be"
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, longTermTimeout)
	defer cancel()
	names, err := s.Namespaces(ctx, key, maxLongTermNamespaces+1)
	if err != nil {
		out.Error = storeError(err)
		return out
	}
	if len(names) > maxLongTermNamespaces {
		names, out.More = names[:maxLongTermNamespaces], true
	}
	for _, name := range names {
		es, err := s.List(ctx, key, name, "", maxLongTermEntries+1)
		if err != nil {
			out.Error = storeError(err)
			return out
		}
		ns := LongTermNamespace{Name: name, Entries: es}
		if len(es) > maxLongTermEntries {
			ns.Entries, ns.More = es[:maxLongTermEntries], true
		}
		out.Namespaces = append(out.Namespaces, ns)
	}
	return out
}

// storeError names a store failure by its code; its detail never carries the store's
// reference (ltm's errors do not quote it).
func storeError(err error) string {
	var e *ltm.Error
	if errors.As(err, &e) {
		return "the long-term memory store failed: " + e.Error()
	}
	return "the long-term memory store failed"
}
