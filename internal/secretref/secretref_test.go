package secretref_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/secretref"
	"github.com/beamagents/beamagents/internal/testkit/secrettest"
)

func TestRead(t *testing.T) {
	srv := secrettest.Start(t)
	t.Setenv(secretref.EndpointEnv, srv.Addr)
	const secret = "sk-very-secret-value"
	srv.Put("projects/p/secrets/api/versions/3", []byte(secret))
	srv.Deny("projects/p/secrets/ring/versions/1")
	ctx := context.Background()

	for range 3 {
		v, err := secretref.Read(ctx, "gcpsm:projects/p/secrets/api/versions/3")
		if err != nil || string(v) != secret {
			t.Fatalf("read %q, %v", v, err)
		}
	}
	if n := srv.Accesses.Load(); n != 1 {
		t.Fatalf("%d accesses for three reads, want 1 (cached for the process's life)", n)
	}
	for _, tc := range []struct {
		name, ref string
		code      secretref.Code
		want      string
	}{
		{"not found", "gcpsm:projects/p/secrets/api/versions/4", secretref.CodeNotFound, "projects/p/secrets/api/versions/4 does not exist"},
		{"permission denied", "gcpsm:projects/p/secrets/ring/versions/1", secretref.CodePermissionDenied, "roles/secretmanager.secretAccessor"},
		{"bad form", "gcpsm:projects/p/secrets/api", secretref.CodeBadReference, "gcpsm:projects/P/secrets/S/versions/V"},
		{"empty part", "gcpsm:projects//secrets/api/versions/1", secretref.CodeBadReference, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Accesses.Load()
			for range 2 {
				_, err := secretref.Read(ctx, tc.ref)
				if !errors.Is(err, &secretref.Error{Code: tc.code}) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want code %s and %q", err, tc.code, tc.want)
				}
				if strings.Contains(err.Error(), secret) {
					t.Fatal("the error quotes a secret")
				}
			}
			if tc.code != secretref.CodeBadReference && srv.Accesses.Load()-before != 2 {
				t.Fatal("a failed read was cached")
			}
		})
	}
}

func TestCheckAndIs(t *testing.T) {
	for ref, ok := range map[string]bool{
		"gcpsm:projects/p/secrets/s/versions/latest": true,
		"gcpsm:projects/p/secrets/s/versions/":       false,
		"gcpsm:projects/p/topics/s/versions/1":       false,
		"gcpsm:projects/p/secrets/s/versions/1/x":    false,
	} {
		if err := secretref.Check(ref); (err == nil) != ok {
			t.Errorf("Check(%q) = %v", ref, err)
		}
		if !secretref.Is(ref) {
			t.Errorf("Is(%q) = false", ref)
		}
	}
	if secretref.Is("env:X") || secretref.Is("gcpsmx") {
		t.Error("Is accepts another scheme")
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("gcpsm:projects/p/secrets/s/versions/1")
	f.Add("gcpsm:projects/p/secrets/s/versions/")
	f.Add("gcpsm:")
	f.Fuzz(func(t *testing.T, ref string) {
		err := secretref.Check(ref)
		if err == nil && (!secretref.Is(ref) || strings.Count(ref, "/") != 5) {
			t.Fatalf("accepted %q", ref)
		}
		if err != nil && !errors.Is(err, &secretref.Error{Code: secretref.CodeBadReference}) {
			t.Fatalf("error %v is not bad_reference", err)
		}
	})
}
