package secretref_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/secretref"
)

func TestResolveLocal(t *testing.T) {
	t.Setenv("SECRETREF_TEST_VALUE", "v1")
	p := filepath.Join(t.TempDir(), "k")
	os.WriteFile(p, []byte("v2\n"), 0o600)
	ctx := context.Background()
	for _, tc := range []struct {
		ref, want string
		code      secretref.Code
	}{
		{"env:SECRETREF_TEST_VALUE", "v1", ""},
		{"file:" + p, "v2\n", ""},
		{"env:SECRETREF_TEST_UNSET", "", secretref.CodeNotSet},
		{"env:sk-pasted key", "", secretref.CodeNotSet},
		{"file:" + p + ".missing", "", secretref.CodeUnreadable},
		{"vault:x", "", secretref.CodeBadReference},
		{"env:", "", secretref.CodeBadReference},
	} {
		v, err := secretref.Resolve(ctx, tc.ref)
		if string(v) != tc.want || tc.code == "" && err != nil || tc.code != "" && !errors.Is(err, &secretref.Error{Code: tc.code}) {
			t.Fatalf("%s: %q %v", tc.ref, v, err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-pasted") {
			t.Fatalf("%s: the error repeats the argument: %v", tc.ref, err)
		}
	}
	if !secretref.Local("env:X") || !secretref.Local("file:x") || secretref.Local("gcpsm:projects/p/secrets/s/versions/1") {
		t.Fatal("Local")
	}
}

// Parse accepts exactly a known scheme, a colon and a non-empty rest, and splits it there.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"env:X", "file:/a:b", "gcpsm:projects/p/secrets/s/versions/1", "env:", ":x", "sk-abc", "vault:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		scheme, arg, ok := secretref.Parse(ref)
		known := strings.HasPrefix(ref, "env:") || strings.HasPrefix(ref, "file:") || strings.HasPrefix(ref, "gcpsm:")
		if _, rest, _ := strings.Cut(ref, ":"); ok != (known && rest != "") {
			t.Fatalf("%q: ok %v", ref, ok)
		}
		if ok && scheme+":"+arg != ref {
			t.Fatalf("%q split as %q %q", ref, scheme, arg)
		}
	})
}
