package migrate_test

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

func ExampleMigrate() {
	// A pre-versioned blob: entries without a state_schema_version stamp.
	b := []byte{0x12, 0x07, 0x0a, 0x01, 'a', 0x12, 0x02, 'h', 'i'}
	m := &pb.MemoryBlob{}
	if err := proto.Unmarshal(b, m); err != nil {
		panic(err)
	}
	res, err := migrate.Migrate(m)
	fmt.Println(res.From, "→", res.To, res.PreVersioned(), err, m.GetStateSchemaVersion())

	// A blob from a newer binary is refused and left as it is.
	newer := &pb.MemoryBlob{StateSchemaVersion: 2}
	_, err = migrate.Migrate(newer)
	fmt.Println(errors.Is(err, migrate.ErrFutureVersion), newer.GetStateSchemaVersion())
	// Output:
	// 0 → 1 true <nil> 1
	// true 2
}

func ExampleNewRegistry() {
	// A registry for version 2 needs a step 1 → 2 for every versioned message; with only the
	// shipped 0 → 1 steps the chain has a gap and is refused.
	_, err := migrate.NewRegistry(2, migrate.Steps()...)
	fmt.Println(errors.Is(err, migrate.ErrRegistry))
	fmt.Println(err)
	// Output:
	// true
	// migrate: migration_registry_invalid: beam_agents.v1.MemoryBlob: no step 1→2
}
