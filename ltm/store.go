package ltm

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"
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

// Open opens a store from a reference:
//
//	redis://[USER:PASSWORD@]HOST:PORT[/DB]   (or rediss:// for TLS)
//	sqlite:PATH
//	bigtable:projects/PROJECT/instances/INSTANCE/tables/TABLE
//
// A reference may hold a password: errors name its kind, never the reference.
func Open(ctx context.Context, ref string) (Store, error) {
	kind, arg, _ := strings.Cut(ref, ":")
	switch kind {
	case "redis", "rediss":
		return OpenRedis(ctx, RedisOptions{URL: ref})
	case "sqlite":
		if arg == "" {
			return nil, &Error{Code: CodeRef, Detail: "sqlite reference: want sqlite:PATH"}
		}
		return OpenSQLite(ctx, arg)
	case "bigtable":
		return openBigtableRef(ctx, arg)
	}
	return nil, &Error{Code: CodeRef, Detail: fmt.Sprintf("unknown store kind %q (want redis://, sqlite: or bigtable:)", kind)}
}

// checkEntry checks e's bounds before any backend sees it.
func checkEntry(e Entry) error {
	if err := checkKey(e.Entity, e.Namespace, e.Key); err != nil {
		return err
	}
	if len(e.Value) > MaxValueBytes {
		return bounds("value of key %q is %d bytes; the bound is %d", e.Key, len(e.Value), MaxValueBytes)
	}
	return checkSeq(e.Seq)
}

// checkKey checks an entity, a namespace and a key.
func checkKey(entity []byte, namespace, key string) error {
	if err := checkScope(entity, namespace); err != nil {
		return err
	}
	if key == "" {
		return invalid("empty key")
	}
	return checkText("key", key, MaxKeyBytes)
}

// checkScope checks an entity and a namespace.
func checkScope(entity []byte, namespace string) error {
	switch {
	case len(entity) == 0:
		return invalid("empty entity")
	case len(entity) > MaxEntityBytes:
		return bounds("entity is %d bytes; the bound is %d", len(entity), MaxEntityBytes)
	case namespace == "":
		return invalid("empty namespace")
	}
	return checkText("namespace", namespace, MaxNamespaceBytes)
}

func checkText(what, s string, max int) error {
	if len(s) > max {
		return bounds("%s is %d bytes; the bound is %d", what, len(s), max)
	}
	if !utf8.ValidString(s) {
		return invalid("%s %q is not UTF-8", what, s)
	}
	return nil
}

func checkSeq(seq int64) error {
	if seq < 0 {
		return invalid("seq %d is negative", seq)
	}
	return nil
}

// checkList checks a List's arguments.
func checkList(entity []byte, namespace, prefix string, limit int) error {
	if err := checkScope(entity, namespace); err != nil {
		return err
	}
	if err := checkText("prefix", prefix, MaxKeyBytes); err != nil {
		return err
	}
	switch {
	case limit < 1:
		return invalid("list limit %d is below 1", limit)
	case limit > MaxListLimit:
		return bounds("list limit %d; the bound is %d", limit, MaxListLimit)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &Error{Code: CodeInvalid, Detail: fmt.Sprintf(format, args...)}
}

func bounds(format string, args ...any) error {
	return &Error{Code: CodeBounds, Detail: fmt.Sprintf(format, args...)}
}

func stale(key string, seq int64) error {
	return &Error{Code: CodeStale, Detail: fmt.Sprintf("key %q: seq %d is below the stored seq", key, seq)}
}

func failed(err error, format string, args ...any) error {
	return &Error{Code: CodeFailed, Detail: fmt.Sprintf(format, args...), Err: err}
}

// prefixEnd is the least byte string above every string that starts with prefix; nil when
// there is none (an empty prefix or one of 0xff bytes only).
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
