package testschema

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

// Namespace prefixes every memory key in version 2.
const Namespace = "fact/"

var (
	memoryBlob   = (*pb.MemoryBlob)(nil).ProtoReflect().Descriptor().FullName()
	continuation = (*pb.Continuation)(nil).ProtoReflect().Descriptor().FullName()
	llmCacheBlob = (*pb.LlmCacheBlob)(nil).ProtoReflect().Descriptor().FullName()

	v2 = func() *migrate.Registry {
		r, err := migrate.NewRegistry(2, append(migrate.Steps(),
			migrate.Step{Message: memoryBlob, From: 1, Apply: namespaceKeys},
			migrate.Step{Message: continuation, From: 1, Apply: sameLayout},
			migrate.Step{Message: llmCacheBlob, From: 1, Apply: sameLayout},
		)...)
		if err != nil {
			panic(err) // the chain above is incomplete: every test using it fails here
		}
		return r
	}()
)

// V2 returns the registry of state schema version 2.
func V2() *migrate.Registry { return v2 }

// namespaceKeys is MemoryBlob's step 1 → 2. It works on the message through reflection, as
// every step must: the message it receives may be generated or dynamic.
func namespaceKeys(m protoreflect.Message) error {
	entries := m.Descriptor().Fields().ByName("entries")
	list := m.Mutable(entries).List()
	for i := range list.Len() {
		e := list.Get(i).Message()
		key := e.Descriptor().Fields().ByName("key")
		e.Set(key, protoreflect.ValueOfString(Namespace+e.Get(key).String()))
	}
	return nil
}

func sameLayout(protoreflect.Message) error { return nil }
