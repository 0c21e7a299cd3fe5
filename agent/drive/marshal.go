package drive

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// deterministic is the serialization of every output: map entries ordered by key.
var deterministic = proto.MarshalOptions{Deterministic: true}

// Marshal serializes an output deterministically.
func Marshal(m proto.Message) []byte {
	var b []byte
	var err error
	if t, ok := m.(*pb.TraceEvent); ok {
		b, err = marshalTrace(t)
	} else {
		b, err = deterministic.Marshal(m)
	}
	if err != nil {
		panic(fmt.Sprintf("serializing an output: %v", err)) // outputs are built from valid messages
	}
	return b
}

var attributesField = (&pb.TraceEvent{}).ProtoReflect().Descriptor().Fields().ByName("attributes")

// marshalTrace is deterministic.Marshal(t), byte for byte, without the reflective sort of the
// attributes map that dominates the cost of a trace with many attributes: the runtime
// serializes known fields in field-number order and unknown fields last, and a map field as
// one key-value entry message per key, key then value, each always present. So the bytes are
// the fields numbered below the map's, the entries in key order, the fields numbered above
// it, then the unknown fields. A key or value that is not valid UTF-8 takes the runtime's own
// path, which refuses it.
func marshalTrace(t *pb.TraceEvent) ([]byte, error) {
	attrs := t.GetAttributes()
	if len(attrs) < 2 {
		return deterministic.Marshal(t)
	}
	size := 0
	for k, v := range attrs {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return deterministic.Marshal(t)
		}
		size += 1 + protowire.SizeBytes(entrySize(k, v))
	}
	src := t.ProtoReflect()
	lo, hi := &pb.TraceEvent{}, &pb.TraceEvent{}
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch n := fd.Number(); {
		case n < attributesField.Number():
			lo.ProtoReflect().Set(fd, v)
		case n > attributesField.Number():
			hi.ProtoReflect().Set(fd, v)
		}
		return true
	})
	unknown := src.GetUnknown()
	b := make([]byte, 0, proto.Size(lo)+size+proto.Size(hi)+len(unknown))
	b, err := deterministic.MarshalAppend(b, lo)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		v := attrs[k]
		b = protowire.AppendTag(b, attributesField.Number(), protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(entrySize(k, v)))
		b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), k)
		b = protowire.AppendString(protowire.AppendTag(b, 2, protowire.BytesType), v)
	}
	if b, err = deterministic.MarshalAppend(b, hi); err != nil {
		return nil, err
	}
	return append(b, unknown...), nil
}

// entrySize is the size of one map entry message: key (field 1) and value (field 2).
func entrySize(k, v string) int {
	return 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(len(v))
}
