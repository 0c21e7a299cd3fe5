package migrate_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

var fuzzTypes = []func() proto.Message{
	func() proto.Message { return &pb.MemoryBlob{} },
	func() proto.Message { return &pb.Continuation{} },
	func() proto.Message { return &pb.LlmCacheBlob{} },
}

// FuzzMigrateIdempotent: whatever parses either migrates to the current version, after which
// migrating again changes nothing, or is refused as a future version and left untouched.
func FuzzMigrateIdempotent(f *testing.F) {
	for _, name := range []string{"memory_blob.binpb", "continuation.binpb", "continuation_escalations.binpb", "llm_cache_blob.binpb", "llm_cache_blob_digest_only.binpb"} {
		b, err := os.ReadFile(filepath.Join("..", "golden", "v1", name))
		if err != nil {
			f.Fatal(err)
		}
		for i := range fuzzTypes {
			f.Add(uint8(i), b)
		}
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0x08, 0x02})                   // version 2
	f.Add(uint8(2), []byte{0x08, 0x00, 0x12, 0x00})       // explicit version 0, one empty entry
	f.Add(uint8(0), []byte{0x12, 0x03, 0x0a, 0x01, 0x61}) // pre-versioned, entry "a"
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		m := fuzzTypes[int(which)%len(fuzzTypes)]()
		if proto.Unmarshal(b, m) != nil {
			return
		}
		before := proto.Clone(m)
		v, _ := migrate.Version(m)
		res, err := migrate.Migrate(m)
		if v > migrate.CurrentStateSchemaVersion {
			if !errors.Is(err, migrate.ErrFutureVersion) || !proto.Equal(before, m) {
				t.Fatalf("future version %d: err %v, modified %v", v, err, !proto.Equal(before, m))
			}
			return
		}
		if err != nil || res.From != v || res.To != migrate.CurrentStateSchemaVersion {
			t.Fatalf("Migrate = %+v, %v (decoded at %d)", res, err, v)
		}
		once := proto.Clone(m)
		res, err = migrate.Migrate(m)
		if err != nil || res.Migrated() || !proto.Equal(once, m) {
			t.Fatalf("second Migrate = %+v, %v; changed %v", res, err, !proto.Equal(once, m))
		}
	})
}
