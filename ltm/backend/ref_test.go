package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/ltm"
)

func TestCheckRef(t *testing.T) {
	for _, tc := range []struct {
		ref string
		ok  bool
	}{
		{"sqlite:/tmp/memory.db", true},
		{"redis://:s3cret@127.0.0.1:6379/0", true},
		{"rediss://user:pw@cache.example:6380", true},
		{"bigtable:projects/p/instances/i/tables/t", true},
		{"postgres://ltm:s3cret@127.0.0.1:5432/memory?sslmode=disable", true},
		{"postgresql://db.example/memory?search_path=agents", true},
		{"postgres:db.example/memory", false},
		{"postgres://h:99999999/db", false},
		{"env:MEMORY_STORE", true},
		{"file:/run/secrets/memory", true},
		{"gcpsm:projects/p/secrets/s/versions/latest", true},
		{"sqlite:", false},
		{"sqlite:/tmp/m.db?mode=ro", false},
		{"redis:s3cret@host", false},
		{"bigtable:projects/p/tables/t", false},
		{"gcpsm:projects/p", false},
		{"hunter2", false},
		{"", false},
	} {
		err := CheckRef(tc.ref)
		if (err == nil) != tc.ok {
			t.Errorf("CheckRef(%q) = %v, want ok %v", tc.ref, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ltm.ErrRef) {
			t.Errorf("CheckRef(%q) = %v, want ErrRef", tc.ref, err)
		}
	}
}

func TestResolve(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(path, []byte("redis://:pw@127.0.0.1:6379\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LTM_REF_OK", "sqlite:/tmp/m.db")
	t.Setenv("LTM_REF_BAD", "hunter2-password")
	for _, tc := range []struct{ ref, want string }{
		{"sqlite:/x.db", "sqlite:/x.db"},
		{"file:" + path, "redis://:pw@127.0.0.1:6379"},
		{"env:LTM_REF_OK", "sqlite:/tmp/m.db"},
		{"env:LTM_REF_BAD", ""},
		{"env:LTM_REF_UNSET", ""},
		{"nope", ""},
	} {
		got, err := Resolve(context.Background(), tc.ref)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.ref, got, err, tc.want)
		}
		if err != nil && (!errors.Is(err, ltm.ErrRef) || strings.Contains(err.Error(), "hunter2")) {
			t.Errorf("Resolve(%q) error %v: want ErrRef, no secret", tc.ref, err)
		}
	}
}

// FuzzCheckRef: any text is refused or accepted with a typed error, and a refusal never
// quotes text without a colon (a pasted password).
func FuzzCheckRef(f *testing.F) {
	for _, s := range []string{"sqlite:/a.db", "redis://h:1", "postgres://u:p@h:1/d", "bigtable:projects/p/instances/i/tables/t", "env:X", "gcpsm:x", "pw"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		err := CheckRef(ref)
		if err == nil {
			return
		}
		if !errors.Is(err, ltm.ErrRef) {
			t.Fatalf("CheckRef(%q) = %v, not ErrRef", ref, err)
		}
		if len(ref) >= 4 && !strings.Contains(ref, ":") && strings.Contains(err.Error(), ref) {
			t.Fatalf("CheckRef(%q) quotes it: %v", ref, err)
		}
	})
}
