package backend

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/ltm"
)

// CheckRef checks the form of a store reference without opening the store or reading a
// secret: a reference Open takes (sqlite:PATH, redis://…, rediss://…, postgres://…,
// bigtable:…), or a secret reference (env:VAR, file:PATH, gcpsm:…) whose value is one, which
// Resolve reads. A Redis or PostgreSQL reference carries its password, so a run may give it
// behind a secret reference.
func CheckRef(ref string) error {
	if scheme, _, ok := secretref.Parse(ref); ok {
		if scheme == secretref.Scheme {
			if err := secretref.Check(ref); err != nil {
				return &ltm.Error{Code: ltm.CodeRef, Detail: "store reference in secret manager", Err: err}
			}
		}
		return nil
	}
	return checkStoreRef(ref)
}

// Resolve is the store reference ref names: ref itself when it is one, else the value of the
// secret reference ref (surrounding white space trimmed), which must be one. Its errors
// never quote a reference's value.
func Resolve(ctx context.Context, ref string) (string, error) {
	if _, _, ok := secretref.Parse(ref); !ok {
		if err := checkStoreRef(ref); err != nil {
			return "", err
		}
		return ref, nil
	}
	b, err := secretref.Resolve(ctx, ref)
	if err != nil {
		return "", &ltm.Error{Code: ltm.CodeRef, Detail: "reading the store reference", Err: err}
	}
	v := strings.TrimSpace(string(b))
	if err := checkStoreRef(v); err != nil {
		return "", &ltm.Error{Code: ltm.CodeRef, Detail: "the secret does not hold a store reference (sqlite:PATH, redis://…, postgres://… or bigtable:…)"}
	}
	return v, nil
}

// OpenRef opens the store ref names: a store reference, or a secret reference holding one
// (Resolve, then Open).
func OpenRef(ctx context.Context, ref string) (ltm.Store, error) {
	resolved, err := Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	return Open(ctx, resolved)
}

// checkStoreRef checks a reference Open takes, as Open would, without connecting.
func checkStoreRef(ref string) error {
	kind, arg, _ := strings.Cut(ref, ":")
	switch kind {
	case "redis", "rediss":
		if _, err := redis.ParseURL(ref); err != nil || !strings.HasPrefix(arg, "//") {
			return &ltm.Error{Code: ltm.CodeRef, Detail: "redis reference: want redis://[USER:PASSWORD@]HOST:PORT[/DB]"}
		}
		return nil
	case "postgres", "postgresql":
		_, err := parsePostgres(ref)
		return err
	case "sqlite":
		if arg == "" {
			return &ltm.Error{Code: ltm.CodeRef, Detail: "sqlite reference: want sqlite:PATH"}
		}
		return checkSQLitePath(arg)
	case "bigtable":
		_, err := bigtableName(arg)
		return err
	}
	// Not the text before a colon either: a reference without one may be a pasted password.
	return &ltm.Error{Code: ltm.CodeRef, Detail: "not a store reference (want sqlite:PATH, redis://…, rediss://…, postgres://… or bigtable:projects/P/instances/I/tables/T)"}
}
