package drive

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// checkTrace requires marshalTrace to give the runtime's deterministic bytes, or to fail
// where it fails.
func checkTrace(t *testing.T, tr *pb.TraceEvent) {
	t.Helper()
	want, werr := deterministic.Marshal(tr)
	got, err := marshalTrace(tr)
	if (err != nil) != (werr != nil) {
		t.Fatalf("error %v, the runtime's %v", err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("bytes differ from the runtime's deterministic serialization\n got %x\nwant %x", got, want)
	}
}

func TestMarshalTrace(t *testing.T) {
	full := func() *pb.TraceEvent {
		return &pb.TraceEvent{TraceId: []byte("0123456789abcdef"), SpanId: []byte("span0001"), ParentSpanId: []byte("parent01"),
			EntityKey: []byte("k"), Seq: 7, StepIndex: 2, EventType: pb.TraceEvent_LLM_CALL, StartMs: 1767225600000, EndMs: 1767225600100,
			Attributes: map[string]string{"z": "last", "a": "first", "": "empty key", "m": "", "gen_ai.operation.name": "chat", "é": "ü"}}
	}
	withUnknown := full()
	withUnknown.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 3000, protowire.VarintType), 9))
	long := full()
	for i := range 300 {
		long.Attributes[string(rune('a'+i%26))+string(bytes.Repeat([]byte("x"), i))] = string(bytes.Repeat([]byte("v"), i*3))
	}
	for _, tc := range []struct {
		name string
		tr   *pb.TraceEvent
	}{
		{"every field", full()},
		{"every field the message has", everyField(t)},
		{"negative numbers", &pb.TraceEvent{Seq: -1, EventType: -2, StartMs: -3, EndMs: math.MinInt64, StepIndex: math.MaxUint32,
			Attributes: map[string]string{"b": "", "a": ""}}},
		{"no attributes", &pb.TraceEvent{Seq: 1, StartMs: 5}},
		{"one attribute", &pb.TraceEvent{Attributes: map[string]string{"a": "b"}, EndMs: 3}},
		{"only attributes", &pb.TraceEvent{Attributes: map[string]string{"b": "2", "a": "1"}}},
		{"unknown fields", withUnknown},
		{"long keys and values", long},
		{"key not UTF-8", &pb.TraceEvent{Attributes: map[string]string{"\xff": "v", "a": "b"}}},
		{"value not UTF-8", &pb.TraceEvent{Attributes: map[string]string{"k": "\xc3", "a": "b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkTrace(t, tc.tr) })
	}
}

// Traces whose attributes have the same number of keys, other keys, or the same keys with a
// value that is not UTF-8, in turn: the key sets Marshal keeps never stand for another one.
func TestMarshalTraceKeySets(t *testing.T) {
	for _, attrs := range []map[string]string{
		{"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2", "c": "3"}, {"x": "1", "b": "2", "c": "3"},
		{"a": "1", "b": "2", "c": "\xff"}, {"a": "1", "b": "2", "c": "3"}, {"c": "1", "b": "2", "a": "3"},
	} {
		checkTrace(t, &pb.TraceEvent{Seq: 1, Attributes: attrs})
	}
}

// everyField is a trace with every field of TraceEvent set, found by reflection: a field added
// to the message shows here, and fails TestMarshalTrace until marshalTrace writes it.
func everyField(t *testing.T) *pb.TraceEvent {
	tr := &pb.TraceEvent{}
	m := tr.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			mv := m.Mutable(fd).Map()
			for _, k := range []string{"k2", "k1", "k3"} {
				mv.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString("v-"+k))
			}
		case fd.IsList():
			t.Fatalf("field %s: a repeated field is not written by marshalTrace", fd.Name())
		default:
			switch fd.Kind() {
			case protoreflect.BytesKind:
				m.Set(fd, protoreflect.ValueOfBytes([]byte(fd.Name())))
			case protoreflect.StringKind:
				m.Set(fd, protoreflect.ValueOfString(string(fd.Name())))
			case protoreflect.Int64Kind:
				m.Set(fd, protoreflect.ValueOfInt64(int64(1000+fd.Number())))
			case protoreflect.Uint32Kind:
				m.Set(fd, protoreflect.ValueOfUint32(uint32(100+fd.Number())))
			case protoreflect.EnumKind:
				m.Set(fd, protoreflect.ValueOfEnum(2))
			default:
				t.Fatalf("field %s: kind %s not covered by this test", fd.Name(), fd.Kind())
			}
		}
	}
	return tr
}

// Any trace (decoded from fuzzed bytes, unknown fields kept) with an extra attribute
// serializes as the runtime serializes it.
func FuzzMarshalTrace(f *testing.F) {
	seed, _ := proto.Marshal(&pb.TraceEvent{TraceId: []byte("t"), Seq: 3, EventType: pb.TraceEvent_ACTIVATION_END,
		Attributes: map[string]string{"x": "1", "y": "2"}, StartMs: 4, EndMs: 5})
	f.Add(seed, "k", "v")
	f.Add([]byte{0xc0, 0xbb, 0x01, 0x05}, "", "")
	f.Fuzz(func(t *testing.T, b []byte, k, v string) {
		tr := &pb.TraceEvent{}
		if proto.Unmarshal(b, tr) != nil {
			return
		}
		if tr.Attributes == nil {
			tr.Attributes = map[string]string{}
		}
		tr.Attributes[k] = v
		checkTrace(t, tr)
	})
}

// llmCallTrace is a trace shaped like a model call's: 25 attributes.
func llmCallTrace() *pb.TraceEvent {
	attrs := map[string]string{}
	for _, k := range []string{"beam_agents.agent", "beam_agents.billed", "beam_agents.cache", "beam_agents.cache_hit", "beam_agents.case",
		"beam_agents.conformance.conforming", "beam_agents.conformance.delta_digest", "beam_agents.conformance.input_sha256",
		"beam_agents.conformance.manifest_digest", "beam_agents.conformance.output_sha256", "beam_agents.conformance.producer_case",
		"beam_agents.conformance.producer_digest", "beam_agents.conformance.protocol", "beam_agents.conformance.reason",
		"beam_agents.conformance.receipt_digest", "beam_agents.conformance.receiver_digest", "beam_agents.conformance.transformations",
		"beam_agents.conformance.verdict", "beam_agents.conformance.warnings", "gen_ai.operation.name", "gen_ai.request.model",
		"gen_ai.response.finish_reasons", "gen_ai.response.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
		attrs[k] = "sha256:32d0c9a8044dcb03105df5f077ef180af10aa4f5ed070893a3dc45adce5ede6c"
	}
	return &pb.TraceEvent{TraceId: []byte("0123456789abcdef"), SpanId: []byte("span0001"), ParentSpanId: []byte("parent01"),
		EntityKey: []byte("customer-00001"), Seq: 7, EventType: pb.TraceEvent_LLM_CALL, Attributes: attrs, StartMs: 1767225600000, EndMs: 1767225600000}
}

// BenchmarkMarshalTrace compares the runtime's deterministic serialization of a model call's
// trace with Marshal's.
func BenchmarkMarshalTrace(b *testing.B) {
	tr := llmCallTrace()
	b.Run("runtime", func(b *testing.B) {
		for range b.N {
			deterministic.Marshal(tr)
		}
	})
	b.Run("Marshal", func(b *testing.B) {
		for range b.N {
			Marshal(tr)
		}
	})
}
