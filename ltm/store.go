package ltm

import (
	"context"
)

// Entry is one long-term memory entry: Value under Key in Namespace of Entity, written by the
// activation whose seq is Seq.
type Entry struct {
	Entity    []byte
	Namespace string
	Key       string
	Value     []byte
	Seq       int64
}

// Store is a long-term memory store. Writes carry the writing activation's seq: one whose seq
// is below the seq stored for its key (a value's or a tombstone's) is refused with ErrStale
// and writes nothing; an equal seq rewrites (the same activation, retried). Each backend
// checks and writes in one atomic step, so concurrent writers end with the highest seq's
// write whatever their order. Implementations are safe for concurrent use.
type Store interface {
	// Put writes e, unless a higher seq is stored for its key (ErrStale).
	Put(ctx context.Context, e Entry) error
	// Get reads the live entry of key; false when there is none or it was deleted.
	Get(ctx context.Context, entity []byte, namespace, key string) (Entry, bool, error)
	// List returns up to limit live entries of namespace whose key starts with prefix, in
	// ascending byte order of key.
	List(ctx context.Context, entity []byte, namespace, prefix string, limit int) ([]Entry, error)
	// Delete replaces key's entry with a tombstone of seq, unless a higher seq is stored
	// (ErrStale). Deleting a missing key leaves a tombstone too.
	Delete(ctx context.Context, entity []byte, namespace, key string, seq int64) error
	// Namespaces returns up to limit namespaces of entity that hold at least one live entry,
	// in ascending byte order: what an operator's view of a key lists before its entries.
	Namespaces(ctx context.Context, entity []byte, limit int) ([]string, error)
	Close() error
}

// Bounds of an entry and of a list.
const (
	MaxEntityBytes    = 512
	MaxNamespaceBytes = 128
	MaxKeyBytes       = 512
	MaxValueBytes     = 64 << 10
	MaxListLimit      = 1000
)
