package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
)

// Complete keeps the first recorded completion: a late owner gets it back instead of
// overwriting it.
func TestStoreCompleteKeepsFirst(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) store.Store{
		"bbolt": func(t *testing.T) store.Store { return openBolt(t) },
		"redis": func(t *testing.T) store.Store { return openRedis(t, testsvc.Redis(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			ctx := context.Background()
			if c, _ := s.Claim(ctx, "id", "a", 0, 10); c.State != store.Claimed {
				t.Fatal(c)
			}
			if rec, err := s.Complete(ctx, "id", "a", []byte("first")); err != nil || string(rec) != "first" {
				t.Fatal(string(rec), err)
			}
			if rec, err := s.Complete(ctx, "id", "b", []byte("second")); err != nil || string(rec) != "first" {
				t.Fatal(string(rec), err)
			}
			if c, _ := s.Claim(ctx, "id", "c", 1<<40, 10); c.State != store.Done || string(c.Result) != "first" {
				t.Fatal(c)
			}
			if c, _ := s.Claim(ctx, "other", "a", 0, 60_000); c.State != store.Claimed {
				t.Fatal(c)
			}
			if c, _ := s.Claim(ctx, "other", "b", 1, 60_000); c.State != store.Busy {
				t.Fatalf("a live claim of another owner: %+v", c)
			}
			if c, _ := s.Claim(ctx, "other", "a", 1, 60_000); c.State != store.Claimed {
				t.Fatalf("the owner's own claim: %+v", c)
			}
		})
	}
}

func openBolt(t testing.TB) *store.Bolt {
	t.Helper()
	s, err := store.OpenBolt(filepath.Join(t.TempDir(), "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openRedis(t testing.TB, addr string) *store.Redis {
	t.Helper()
	s, err := store.OpenRedis(store.RedisOptions{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Open accepts bbolt: and redis: references and refuses anything else with ErrRef.
func TestOpen(t *testing.T) {
	for _, ref := range []string{"", "bbolt", "bbolt:", "sqlite:x.db", "redis"} {
		if _, err := store.Open(ref); !errors.Is(err, store.ErrRef) {
			t.Errorf("Open(%q): %v, want ErrRef", ref, err)
		}
	}
	s, err := store.Open("bbolt:" + filepath.Join(t.TempDir(), "d", "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
