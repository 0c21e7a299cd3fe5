package backend

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/beamagents/beamagents/ltm"
)

// Open opens a store from a reference:
//
//	redis://[USER:PASSWORD@]HOST:PORT[/DB]   (or rediss:// for TLS)
//	postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?PARAMS]   (or postgresql://)
//	sqlite:PATH
//	bigtable:projects/PROJECT/instances/INSTANCE/tables/TABLE
//
// A reference may hold a password: errors name its kind, never the reference.
func Open(ctx context.Context, ref string) (ltm.Store, error) {
	kind, arg, _ := strings.Cut(ref, ":")
	switch kind {
	case "redis", "rediss":
		return OpenRedis(ctx, RedisOptions{URL: ref})
	case "postgres", "postgresql":
		return OpenPostgres(ctx, PostgresOptions{URL: ref})
	case "sqlite":
		if arg == "" {
			return nil, &ltm.Error{Code: ltm.CodeRef, Detail: "sqlite reference: want sqlite:PATH"}
		}
		return OpenSQLite(ctx, arg)
	case "bigtable":
		return openBigtableRef(ctx, arg)
	}
	return nil, &ltm.Error{Code: ltm.CodeRef, Detail: fmt.Sprintf("unknown store kind %q (want redis://, postgres://, sqlite: or bigtable:)", kind)}
}

// checkEntry checks e's bounds before any backend sees it.
func checkEntry(e ltm.Entry) error {
	if err := checkKey(e.Entity, e.Namespace, e.Key); err != nil {
		return err
	}
	if len(e.Value) > ltm.MaxValueBytes {
		return bounds("value of key %q is %d bytes; the bound is %d", e.Key, len(e.Value), ltm.MaxValueBytes)
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
	return checkText("key", key, ltm.MaxKeyBytes)
}

// checkScope checks an entity and a namespace.
func checkScope(entity []byte, namespace string) error {
	switch {
	case len(entity) == 0:
		return invalid("empty entity")
	case len(entity) > ltm.MaxEntityBytes:
		return bounds("entity is %d bytes; the bound is %d", len(entity), ltm.MaxEntityBytes)
	case namespace == "":
		return invalid("empty namespace")
	}
	return checkText("namespace", namespace, ltm.MaxNamespaceBytes)
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
	if err := checkText("prefix", prefix, ltm.MaxKeyBytes); err != nil {
		return err
	}
	return checkLimit(limit)
}

// checkNamespaces checks a Namespaces' arguments: an entity as a scope has it, and a limit.
func checkNamespaces(entity []byte, limit int) error {
	if err := checkScope(entity, "-"); err != nil {
		return err
	}
	return checkLimit(limit)
}

func checkLimit(limit int) error {
	switch {
	case limit < 1:
		return invalid("list limit %d is below 1", limit)
	case limit > ltm.MaxListLimit:
		return bounds("list limit %d; the bound is %d", limit, ltm.MaxListLimit)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return &ltm.Error{Code: ltm.CodeInvalid, Detail: fmt.Sprintf(format, args...)}
}

func bounds(format string, args ...any) error {
	return &ltm.Error{Code: ltm.CodeBounds, Detail: fmt.Sprintf(format, args...)}
}

func stale(key string, seq int64) error {
	return &ltm.Error{Code: ltm.CodeStale, Detail: fmt.Sprintf("key %q: seq %d is below the stored seq", key, seq)}
}

func failed(err error, format string, args ...any) error {
	return &ltm.Error{Code: ltm.CodeFailed, Detail: fmt.Sprintf(format, args...), Err: err}
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
