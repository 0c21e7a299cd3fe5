package backend_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
)

// BenchmarkStore measures one Put (a 256-byte value, the next seq of one of 64 keys) and one
// Get per backend, sequentially from one goroutine.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	backends := []struct {
		name string
		open func(b *testing.B) ltm.Store
	}{
		{"sqlite", func(b *testing.B) ltm.Store {
			s, err := backend.OpenSQLite(ctx, filepath.Join(b.TempDir(), "ltm.db"))
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"redis", func(b *testing.B) ltm.Store {
			s, err := backend.OpenRedis(ctx, backend.RedisOptions{URL: "redis://" + testsvc.Redis(b)})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	value := make([]byte, 256)
	entity := []byte("customer-1")
	for _, be := range backends {
		s := be.open(b)
		b.Cleanup(func() { s.Close() })
		b.Run(be.name+"/Put", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				e := ltm.Entry{Entity: entity, Namespace: "facts", Key: fmt.Sprintf("k%02d", i%64), Value: value, Seq: int64(i)}
				if err := s.Put(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(be.name+"/Get", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if _, ok, err := s.Get(ctx, entity, "facts", fmt.Sprintf("k%02d", i%64)); err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}
