package drive

import (
	"fmt"
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

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

// marshalTrace is deterministic.Marshal(t), byte for byte, without the reflective sort of the
// attributes map that dominates the runtime's cost for a trace with many attributes. It writes
// the wire format the runtime writes: the set fields in field-number order, each scalar only
// when it is not zero, the map as one entry message per key (key, then value, both always
// present) in key order, and the unknown fields last. A key or value that is not valid UTF-8
// takes the runtime's path, which refuses it. TestMarshalTrace sets every field the message
// has, so a field added to TraceEvent fails it until it is written here.
func marshalTrace(t *pb.TraceEvent) ([]byte, error) {
	var buf [32]string // the values, off the heap for the usual number of attributes
	keys, vals, ok := sortedAttributes(t.Attributes, buf[:0])
	if !ok {
		return deterministic.Marshal(t)
	}
	size := sizeBytes(t.TraceId) + sizeBytes(t.SpanId) + sizeBytes(t.ParentSpanId) + sizeBytes(t.EntityKey) +
		sizeVarint(uint64(t.Seq)) + sizeVarint(uint64(t.StepIndex)) + sizeVarint(uint64(t.EventType)) +
		sizeVarint(uint64(t.StartMs)) + sizeVarint(uint64(t.EndMs))
	for i, k := range keys {
		size += 1 + protowire.SizeBytes(entrySize(k, vals[i]))
	}
	unknown := t.ProtoReflect().GetUnknown()
	b := make([]byte, 0, size+len(unknown))
	b = appendBytes(b, 1, t.TraceId)
	b = appendBytes(b, 2, t.SpanId)
	b = appendBytes(b, 3, t.ParentSpanId)
	b = appendBytes(b, 4, t.EntityKey)
	b = appendVarint(b, 5, uint64(t.Seq))
	b = appendVarint(b, 6, uint64(t.StepIndex))
	b = appendVarint(b, 7, uint64(t.EventType))
	for i, k := range keys {
		v := vals[i]
		b = appendLen(append(b, tag(8)), entrySize(k, v))
		b = append(appendLen(append(b, tag(1)), len(k)), k...)
		b = append(appendLen(append(b, tag(2)), len(v)), v...)
	}
	b = appendVarint(b, 9, uint64(t.StartMs))
	b = appendVarint(b, 10, uint64(t.EndMs))
	return append(b, unknown...), nil
}

// Each field number of TraceEvent, and of a map entry, fits a one-byte tag.
func tag(n protowire.Number) byte { return byte(n)<<3 | byte(protowire.BytesType) }

// appendLen appends a length, inline for the usual one-byte length.
func appendLen(b []byte, n int) []byte {
	if n < 0x80 {
		return append(b, byte(n))
	}
	return protowire.AppendVarint(b, uint64(n))
}

func sizeBytes(v []byte) int {
	if len(v) == 0 {
		return 0
	}
	return 1 + protowire.SizeBytes(len(v))
}

func sizeVarint(v uint64) int {
	if v == 0 {
		return 0
	}
	return 1 + protowire.SizeVarint(v)
}

func appendBytes(b []byte, n protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return append(appendLen(append(b, tag(n)), len(v)), v...)
}

func appendVarint(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), v)
}

// entrySize is the size of one map entry message: key (field 1) and value (field 2).
func entrySize(k, v string) int {
	return 1 + protowire.SizeBytes(len(k)) + 1 + protowire.SizeBytes(len(v))
}

// sortedAttributes returns the keys of attrs in order and their values (in vals, grown if
// need be), and false when a key or value is not valid UTF-8. A trace's attributes come from
// few distinct key sets (one per kind of event), so the last sorted set of each size is kept
// and reused when attrs has exactly its keys.
func sortedAttributes(attrs map[string]string, vals []string) ([]string, []string, bool) {
	n := len(attrs)
	vals = slices.Grow(vals[:0], n)[:n]
	var slot *atomic.Pointer[[]string]
	if n < len(sortedSets) {
		slot = &sortedSets[n]
		if p := slot.Load(); p != nil && valuesOf(*p, attrs, vals) {
			return *p, vals, true
		}
	}
	keys := make([]string, 0, n)
	for k, v := range attrs {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, nil, false
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		vals[i] = attrs[k]
	}
	if slot != nil {
		kept := keys
		slot.Store(&kept)
	}
	return keys, vals, true
}

// sortedSets holds the last sorted key set of each size (read-only once stored).
var sortedSets [64]atomic.Pointer[[]string]

// valuesOf fills vals with the values of keys (distinct, valid UTF-8) in attrs and reports
// whether attrs has exactly those keys, with valid UTF-8 values.
func valuesOf(keys []string, attrs map[string]string, vals []string) bool {
	if len(keys) != len(attrs) {
		return false
	}
	for i, k := range keys {
		v, ok := attrs[k]
		if !ok || !utf8.ValidString(v) {
			return false
		}
		vals[i] = v
	}
	return true
}
