package migrate_test

// The chain test: a test-only state_schema_version 2 (testdata/v2/state.proto) with a real
// breaking change in each versioned message, v1 → v2 steps built on the registered steps, and
// the frozen v1 golden blobs migrated through the whole chain. It exercises the mechanism a
// real version bump will use, not only the identity step.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/dynamicpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	goldenv1 "github.com/beamagents/beamagents/golden/v1"
	"github.com/beamagents/beamagents/migrate"
)

// v2Types compiles testdata/v2/state.proto and returns its message types by short name.
func v2Types(t testing.TB) map[string]protoreflect.MessageType {
	t.Helper()
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{ImportPaths: []string{"testdata/v2"}}}
	files, err := c.Compile(context.Background(), "state.proto")
	if err != nil {
		t.Fatalf("compile v2 schema: %v", err)
	}
	out := map[string]protoreflect.MessageType{}
	msgs := files[0].Messages()
	for i := 0; i < msgs.Len(); i++ {
		out[string(msgs.Get(i).Name())] = dynamicpb.NewMessageType(msgs.Get(i))
	}
	return out
}

// takeUnknown removes every occurrence of field num from m's unknown fields and returns the
// last one's varint (proto's last-one-wins rule for a scalar). A wrong wire type is an error:
// the bytes are not what the v1 schema wrote.
func takeUnknown(m protoreflect.Message, num protowire.Number) (v uint64, found bool, err error) {
	b := m.GetUnknown()
	var kept protoreflect.RawFields
	for len(b) > 0 {
		n, typ, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return 0, false, protowire.ParseError(tl)
		}
		fl := protowire.ConsumeFieldValue(n, typ, b[tl:])
		if fl < 0 {
			return 0, false, protowire.ParseError(fl)
		}
		if n != num {
			kept = append(kept, b[:tl+fl]...)
		} else if typ != protowire.VarintType {
			return 0, false, fmt.Errorf("field %d has wire type %d, want varint", n, typ)
		} else {
			v, _ = protowire.ConsumeVarint(b[tl:])
			found = true
		}
		b = b[tl+fl:]
	}
	m.SetUnknown(kept)
	return v, found, nil
}

func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic(fmt.Sprintf("%s has no field %s", m.Descriptor().FullName(), name))
	}
	return fd
}

func eachEntry(m protoreflect.Message, apply func(protoreflect.Message) error) error {
	l := m.Mutable(field(m, "entries")).List()
	for i := 0; i < l.Len(); i++ {
		if err := apply(l.Get(i).Message()); err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
	}
	return nil
}

// v1to2 are the steps a real bump to testdata/v2 would register.
var v1to2 = []migrate.Step{
	{Message: "beam_agents.v1.MemoryBlob", From: 1, Apply: func(m protoreflect.Message) error {
		return eachEntry(m, func(e protoreflect.Message) error {
			at, ok, err := takeUnknown(e, 3)
			if ok {
				acc := e.Mutable(field(e, "access")).Message()
				acc.Set(field(acc, "last_access_ms"), protoreflect.ValueOfInt64(int64(at)))
			}
			return err
		})
	}},
	{Message: "beam_agents.v1.Continuation", From: 1, Apply: func(m protoreflect.Message) error {
		at, okAt, err := takeUnknown(m, 8)
		if err != nil {
			return err
		}
		esc, okEsc, err := takeUnknown(m, 9)
		if err != nil {
			return err
		}
		if esc > 1<<32-1 {
			return fmt.Errorf("escalations %d overflow uint32", esc)
		}
		if okAt || okEsc {
			d := m.Mutable(field(m, "deadline")).Message()
			d.Set(field(d, "at_ms"), protoreflect.ValueOfInt64(int64(at)))
			d.Set(field(d, "escalations"), protoreflect.ValueOfUint32(uint32(esc)))
		}
		return nil
	}},
	{Message: "beam_agents.v1.LlmCacheBlob", From: 1, Apply: func(m protoreflect.Message) error {
		return eachEntry(m, func(e protoreflect.Message) error {
			digestOnly, _, err := takeUnknown(e, 6)
			body := protoreflect.EnumNumber(1) // BODY_FULL
			if digestOnly != 0 {
				body = 2 // BODY_DIGEST_ONLY
			}
			e.Set(field(e, "body"), protoreflect.ValueOfEnum(body))
			return err
		})
	}},
}

func v2Registry(t testing.TB) *migrate.Registry {
	t.Helper()
	r, err := migrate.NewRegistry(2, append(migrate.Steps(), v1to2...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// expectV2 builds, field by field from a frozen v1 builder value, what the v2 schema must hold
// after migration: the oracle is written independently of the steps' unknown-field handling.
func expectV2(t testing.TB, types map[string]protoreflect.MessageType, v1 proto.Message) proto.Message {
	t.Helper()
	switch v := v1.(type) {
	case *pb.MemoryBlob:
		m := types["MemoryBlob"].New()
		m.Set(field(m, "state_schema_version"), protoreflect.ValueOfUint32(2))
		m.Set(field(m, "total_value_bytes"), protoreflect.ValueOfInt64(v.GetTotalValueBytes()))
		l := m.Mutable(field(m, "entries")).List()
		for _, e := range v.GetEntries() {
			ne := l.AppendMutable().Message()
			ne.Set(field(ne, "key"), protoreflect.ValueOfString(e.GetKey()))
			ne.Set(field(ne, "value"), protoreflect.ValueOfBytes(e.GetValue()))
			acc := ne.Mutable(field(ne, "access")).Message()
			acc.Set(field(acc, "last_access_ms"), protoreflect.ValueOfInt64(e.GetLastAccessMs()))
		}
		return m.Interface()
	case *pb.Continuation:
		m := types["Continuation"].New()
		m.Set(field(m, "state_schema_version"), protoreflect.ValueOfUint32(2))
		m.Set(field(m, "seq"), protoreflect.ValueOfInt64(v.GetSeq()))
		m.Set(field(m, "step_index"), protoreflect.ValueOfUint32(v.GetStepIndex()))
		ids := m.Mutable(field(m, "pending_intent_ids")).List()
		for _, id := range v.GetPendingIntentIds() {
			ids.Append(protoreflect.ValueOfString(id))
		}
		m.Set(field(m, "adapter"), protoreflect.ValueOfString(v.GetAdapter()))
		m.Set(field(m, "snapshot"), protoreflect.ValueOfBytes(v.GetSnapshot()))
		m.Set(field(m, "suspended_at_ms"), protoreflect.ValueOfInt64(v.GetSuspendedAtMs()))
		m.Set(field(m, "wake_at_ms"), protoreflect.ValueOfInt64(v.GetWakeAtMs()))
		m.Set(field(m, "awaiting_signal"), protoreflect.ValueOfString(v.GetAwaitingSignal()))
		m.Set(field(m, "agent"), protoreflect.ValueOfString(v.GetAgent()))
		d := m.Mutable(field(m, "deadline")).Message()
		d.Set(field(d, "at_ms"), protoreflect.ValueOfInt64(v.GetDeadlineMs()))
		d.Set(field(d, "escalations"), protoreflect.ValueOfUint32(v.GetEscalations()))
		return m.Interface()
	case *pb.LlmCacheBlob:
		m := types["LlmCacheBlob"].New()
		m.Set(field(m, "state_schema_version"), protoreflect.ValueOfUint32(2))
		m.Set(field(m, "total_response_bytes"), protoreflect.ValueOfInt64(v.GetTotalResponseBytes()))
		l := m.Mutable(field(m, "entries")).List()
		for _, e := range v.GetEntries() {
			ne := l.AppendMutable().Message()
			ne.Set(field(ne, "cache_key"), protoreflect.ValueOfString(e.GetCacheKey()))
			ne.Set(field(ne, "response"), protoreflect.ValueOfBytes(e.GetResponse()))
			ne.Set(field(ne, "response_digest"), protoreflect.ValueOfBytes(e.GetResponseDigest()))
			ne.Set(field(ne, "created_at_ms"), protoreflect.ValueOfInt64(e.GetCreatedAtMs()))
			ne.Set(field(ne, "last_access_ms"), protoreflect.ValueOfInt64(e.GetLastAccessMs()))
			body := protoreflect.EnumNumber(1)
			if e.GetDigestOnly() {
				body = 2
			}
			ne.Set(field(ne, "body"), protoreflect.ValueOfEnum(body))
		}
		return m.Interface()
	}
	t.Fatalf("not a versioned message: %T", v1)
	return nil
}

// versionedGoldens returns the v1 golden cases of versioned messages with their blob bytes.
func versionedGoldens(t testing.TB) []goldenCase {
	t.Helper()
	var out []goldenCase
	for _, c := range goldenv1.Cases() {
		want := c.Build()
		if _, err := migrate.Version(want); err != nil {
			continue
		}
		blob, err := os.ReadFile(filepath.Join("..", "golden", "v1", c.File))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, goldenCase{c.File, blob, want})
	}
	if len(out) != 7 {
		t.Fatalf("found %d versioned v1 golden blobs, want 7 (one memory, four continuations (two a handler's journal), two caches)", len(out))
	}
	return out
}

type goldenCase struct {
	file string
	blob []byte
	want proto.Message // the frozen v1 value
}

func parseWith(t testing.TB, mt protoreflect.MessageType, b []byte) proto.Message {
	t.Helper()
	m := mt.New().Interface()
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}

func typeFor(types map[string]protoreflect.MessageType, m proto.Message) protoreflect.MessageType {
	return types[string(m.ProtoReflect().Descriptor().Name())]
}

func diff(want, got proto.Message) string {
	return cmp.Diff(want, got, protocmp.Transform())
}

func TestChainMigratesV1GoldenBlobsToV2(t *testing.T) {
	types, reg := v2Types(t), v2Registry(t)
	for _, gc := range versionedGoldens(t) {
		t.Run(gc.file, func(t *testing.T) {
			m := parseWith(t, typeFor(types, gc.want), gc.blob)
			// Every blob but the plain cache (whose entries all have digest_only false, which
			// proto3 does not encode) carries bytes of a moved field.
			if unknownBytes(m.ProtoReflect()) == 0 && gc.file != "llm_cache_blob.binpb" {
				t.Fatal("v1 bytes of a moved field should parse as unknown fields under v2")
			}
			res, err := reg.Migrate(m)
			if err != nil {
				t.Fatal(err)
			}
			if res != (migrate.Result{From: 1, To: 2}) || !res.Migrated() || res.PreVersioned() {
				t.Fatalf("result %+v, want 1→2", res)
			}
			if d := diff(expectV2(t, types, gc.want), m); d != "" {
				t.Fatalf("migrated value differs (-want +got):\n%s", d)
			}
			if n := unknownBytes(m.ProtoReflect()); n != 0 {
				t.Fatalf("%d bytes of unknown fields left after migration", n)
			}
		})
	}
}

// unknownBytes counts the unknown-field bytes of m and every message nested in it.
func unknownBytes(m protoreflect.Message) int {
	n := len(m.GetUnknown())
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				n += unknownBytes(v.List().Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			n += unknownBytes(v.Message())
		}
		return true
	})
	return n
}

func TestChainUpgradesPreVersionedBlobsThroughEveryStep(t *testing.T) {
	types, reg := v2Types(t), v2Registry(t)
	for _, gc := range versionedGoldens(t) {
		t.Run(gc.file, func(t *testing.T) {
			v0 := proto.Clone(gc.want)
			v0.ProtoReflect().Clear(v0.ProtoReflect().Descriptor().Fields().ByNumber(1))
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(v0)
			if err != nil {
				t.Fatal(err)
			}
			m := parseWith(t, typeFor(types, gc.want), b)
			res, err := reg.Migrate(m)
			if err != nil {
				t.Fatal(err)
			}
			if res != (migrate.Result{From: 0, To: 2}) || !res.PreVersioned() {
				t.Fatalf("result %+v, want 0→2", res)
			}
			if d := diff(expectV2(t, types, gc.want), m); d != "" {
				t.Fatalf("migrated value differs (-want +got):\n%s", d)
			}
		})
	}
}

func TestChainIsIdempotentAtItsCurrentVersion(t *testing.T) {
	types, reg := v2Types(t), v2Registry(t)
	for _, gc := range versionedGoldens(t) {
		m := parseWith(t, typeFor(types, gc.want), gc.blob)
		if _, err := reg.Migrate(m); err != nil {
			t.Fatal(err)
		}
		once := proto.Clone(m)
		res, err := reg.Migrate(m)
		if err != nil || res != (migrate.Result{From: 2, To: 2}) || res.Migrated() {
			t.Fatalf("%s: second migration = %+v, %v", gc.file, res, err)
		}
		if d := diff(once, m); d != "" {
			t.Fatalf("%s: second migration changed the message:\n%s", gc.file, d)
		}
	}
}

// An older binary must refuse what a newer one wrote and leave it as it is.
func TestChainOlderRegistriesRefuseNewerBlobsUntouched(t *testing.T) {
	types, reg := v2Types(t), v2Registry(t)
	for _, gc := range versionedGoldens(t) {
		m := parseWith(t, typeFor(types, gc.want), gc.blob)
		if _, err := reg.Migrate(m); err != nil {
			t.Fatal(err)
		}
		v2bytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		// The v1 binary parses the v2 bytes (additive decode) but must not migrate them.
		old := parseWith(t, gc.want.ProtoReflect().Type(), v2bytes)
		before := proto.Clone(old)
		_, err = migrate.Migrate(old)
		var me *migrate.Error
		if !errors.Is(err, migrate.ErrFutureVersion) || !errors.As(err, &me) || me.Version != 2 || me.Current != 1 {
			t.Fatalf("%s: v1 registry on a v2 blob: %v", gc.file, err)
		}
		if !proto.Equal(before, old) {
			t.Fatalf("%s: a refused blob was modified", gc.file)
		}
		// And a v2 binary refuses a v3 blob the same way.
		m.ProtoReflect().Set(m.ProtoReflect().Descriptor().Fields().ByNumber(1), protoreflect.ValueOfUint32(3))
		before = proto.Clone(m)
		if _, err := reg.Migrate(m); !errors.Is(err, migrate.ErrFutureVersion) || !proto.Equal(before, m) {
			t.Fatalf("%s: v2 registry on a v3 blob: %v", gc.file, err)
		}
	}
}

// A step that refuses leaves the message exactly as decoded.
func TestChainFailedStepLeavesMessageUntouched(t *testing.T) {
	types, reg := v2Types(t), v2Registry(t)
	// A v1 MemoryBlob whose entry carries field 3 with the wrong wire type: v2 parses it (the
	// field is reserved, so unknown), the v1 → v2 step refuses it.
	entry := protowire.AppendTag(nil, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "k")
	entry = protowire.AppendTag(entry, 3, protowire.BytesType)
	entry = protowire.AppendString(entry, "not-a-varint")
	blob := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)
	blob = protowire.AppendBytes(protowire.AppendTag(blob, 2, protowire.BytesType), entry)
	m := parseWith(t, types["MemoryBlob"], blob)
	before := proto.Clone(m)
	_, err := reg.Migrate(m)
	var me *migrate.Error
	if !errors.Is(err, migrate.ErrStepFailed) || !errors.As(err, &me) || me.Version != 1 || me.Unwrap() == nil {
		t.Fatalf("err = %v, want a failed 1→2 step", err)
	}
	if !proto.Equal(before, m) {
		t.Fatalf("failed migration modified the message:\n%s", diff(before, m))
	}
}
