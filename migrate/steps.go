package migrate

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// steps is the chain of the current schema, one step per versioned message per version.
var steps = []Step{
	// 0 → 1. A pre-versioned blob has the v1 field layout without its stamp (state_schema_version
	// was field 1 from the first schema, so nothing else can differ); the step accepts the
	// fields as they are and the registry stamps 1. It exists so that version 0 is upgraded
	// explicitly and visibly (Result.PreVersioned), never mistaken for a v1 blob. Derived
	// values (the cached totals) are verified by statecodec like those of any other blob.
	{Message: memoryBlob, From: 0, Apply: acceptV1Layout},
	{Message: continuation, From: 0, Apply: acceptV1Layout},
	{Message: llmCacheBlob, From: 0, Apply: acceptV1Layout},
}

func acceptV1Layout(protoreflect.Message) error { return nil }

// Steps returns the registered steps of the current schema, so that a registry for a newer
// schema can be built on them.
func Steps() []Step {
	out := make([]Step, len(steps))
	copy(out, steps)
	return out
}

var defaultRegistry = mustRegistry(CurrentStateSchemaVersion, steps...)

func mustRegistry(current uint32, s ...Step) *Registry {
	r, err := NewRegistry(current, s...)
	if err != nil {
		panic(err) // the chain in this file is incomplete: every test of the module fails here
	}
	return r
}

// Default returns the registry of the current schema.
func Default() *Registry { return defaultRegistry }

// Migrate upgrades m in place to [CurrentStateSchemaVersion] with the default registry; see
// [Registry.Migrate].
func Migrate(m proto.Message) (Result, error) { return defaultRegistry.Migrate(m) }
