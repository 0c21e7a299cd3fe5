package statecodec_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/testschema"
	"github.com/beamagents/beamagents/migrate"
	"github.com/beamagents/beamagents/statecodec"
)

type versioned interface {
	proto.Message
	GetStateSchemaVersion() uint32
}

// The cell codecs under a newer state schema (internal/testkit/testschema's version 2): the frozen
// version 1 blobs and pre-versioned ones are migrated through every registered step, new
// cells are stamped 2, and the build's own schema refuses what version 2 wrote.
func TestCodecsFollowTheirStateSchema(t *testing.T) {
	v2 := testschema.V2()
	suspension := statecodec.Suspension{Seq: 3, PendingIntentIDs: []string{"i"}, Adapter: "a", SuspendedAtMs: t0, DeadlineMs: t0 + 1}
	type codec struct {
		cell    statecodec.Cell
		decode  func(b []byte, schema *migrate.Registry) (encoded []byte, st statecodec.Stats, err error)
		fresh   func(schema *migrate.Registry) []byte
		message func() versioned
	}
	codecs := []codec{
		{statecodec.CellMemory, func(b []byte, s *migrate.Registry) ([]byte, statecodec.Stats, error) {
			m, err := statecodec.DecodeMemory(b, statecodec.MemoryOptions{Schema: s})
			if err != nil {
				return nil, statecodec.Stats{}, err
			}
			e, err := m.Encode()
			return e, m.Stats(), err
		}, func(s *migrate.Registry) []byte {
			m := statecodec.NewMemory(statecodec.MemoryOptions{Schema: s})
			if err := m.Put("k", []byte("v"), t0); err != nil {
				t.Fatal(err)
			}
			b, _ := m.Encode()
			return b
		}, func() versioned { return &pb.MemoryBlob{} }},
		{statecodec.CellLLMCache, func(b []byte, s *migrate.Registry) ([]byte, statecodec.Stats, error) {
			c, err := statecodec.DecodeCache(b, statecodec.CacheOptions{Schema: s})
			if err != nil {
				return nil, statecodec.Stats{}, err
			}
			e, err := c.Encode()
			return e, c.Stats(), err
		}, func(s *migrate.Registry) []byte {
			b, _ := statecodec.NewCache(statecodec.CacheOptions{Schema: s}).Encode()
			return b
		}, func() versioned { return &pb.LlmCacheBlob{} }},
		{statecodec.CellContinuation, func(b []byte, s *migrate.Registry) ([]byte, statecodec.Stats, error) {
			c, err := statecodec.ContinuationOptions{Schema: s}.Decode(b)
			if err != nil {
				return nil, statecodec.Stats{}, err
			}
			e, err := c.Encode()
			return e, c.Stats(), err
		}, func(s *migrate.Registry) []byte {
			c, err := statecodec.ContinuationOptions{Schema: s}.Suspend(suspension)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := c.Encode()
			return b
		}, func() versioned { return &pb.Continuation{} }},
	}
	goldenOf := map[statecodec.Cell]string{statecodec.CellMemory: "memory_blob.binpb", statecodec.CellLLMCache: "llm_cache_blob.binpb", statecodec.CellContinuation: "continuation.binpb"}
	version := func(t *testing.T, c codec, b []byte) uint32 {
		t.Helper()
		m := c.message()
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		return m.GetStateSchemaVersion()
	}
	for _, c := range codecs {
		t.Run(string(c.cell), func(t *testing.T) {
			v1 := golden(t, goldenOf[c.cell])
			enc, st, err := c.decode(v1, v2)
			if err != nil {
				t.Fatal(err)
			}
			if version(t, c, enc) != 2 || st.Migrated != 1 || st.PreVersioned != 0 {
				t.Fatalf("v1 blob under v2: version %d, stats %+v", version(t, c, enc), st)
			}
			if _, _, err := c.decode(enc, nil); err == nil {
				t.Fatal("the build's own schema read a version 2 blob")
			} else {
				wantErr(t, err, statecodec.ErrFutureVersion, c.cell)
			}
			if again, st, err := c.decode(enc, v2); err != nil || string(again) != string(enc) || st.Migrated != 0 {
				t.Fatalf("a version 2 blob decoded again: %v, stats %+v, changed %v", err, st, string(again) != string(enc))
			}
			// Version 0 goes through both steps, 0 → 1 and 1 → 2.
			v0 := c.message()
			if err := proto.Unmarshal(v1, v0); err != nil {
				t.Fatal(err)
			}
			v0.ProtoReflect().Clear(v0.ProtoReflect().Descriptor().Fields().ByNumber(1))
			if enc0, st, err := c.decode(marshal(t, v0), v2); err != nil || string(enc0) != string(enc) || st.Migrated != 1 || st.PreVersioned != 1 {
				t.Fatalf("a pre-versioned blob under v2: %v, stats %+v, same as from v1: %v", err, st, string(enc0) == string(enc))
			}
			if c.cell == statecodec.CellMemory {
				m := &pb.MemoryBlob{}
				proto.Unmarshal(enc, m)
				for _, e := range m.GetEntries() {
					if !strings.HasPrefix(e.GetKey(), testschema.Namespace) {
						t.Fatalf("memory key %q was not moved by the 1 → 2 step", e.GetKey())
					}
				}
			}
			if b := c.fresh(v2); version(t, c, b) != 2 {
				t.Fatalf("a new cell under v2 is stamped %d", version(t, c, b))
			}
			if b := c.fresh(nil); version(t, c, b) != migrate.CurrentStateSchemaVersion {
				t.Fatalf("a new cell under the default schema is stamped %d", version(t, c, b))
			}
		})
	}
}
