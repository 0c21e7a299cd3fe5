package tool

import (
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// FromJSONSchema derives a tool's argument schema from the JSON Schema of its input (an MCP
// tool's inputSchema, an HTTP tool's documented body), so intents are negotiated against
// what the tool itself declares. Stable ids are typeID for the root and typeID + "." +
// property (dotted through nested objects) for fields. Admitted, and how each maps:
//
//   - "object" with "properties": a record (nested objects: nested records); every property
//     is always sent, so "required" changes nothing;
//   - "boolean": bool;
//   - "integer": int64 bounded by minimum/maximum and never beyond ±(2^53−1), the integers a
//     JSON number carries exactly — a wider value is refused, never rounded;
//   - "string" with "format" "int64" or "uint64": a 64-bit integer presented as a decimal
//     string (how a tool declares integers beyond 2^53);
//   - "string": string, bounded in bytes by maxLength (a byte bound never admits more
//     characters than maxLength), default 4096.
//
// Anything else ("number", "array", "null", type unions, enums, patterns) is refused with
// ErrDeclaration: the runtime does not approximate a schema.
func FromJSONSchema(typeID string, schema []byte) (*interaction.Schema, error) {
	var root map[string]any
	if err := jsontext.Decode(string(schema), &root, jsontext.DecodeOptions{}); err != nil {
		return nil, declErr(typeID, err, "input schema is not a JSON object")
	}
	b := &schemaBuilder{argsFile{typeID: typeID}}
	if err := b.message(typeID, "Args", root); err != nil {
		return nil, err
	}
	return b.compile("Args", false)
}

// schemaBuilder reads a JSON Schema into the argument records' descriptor.
type schemaBuilder struct{ argsFile }

func (b *schemaBuilder) message(id, name string, s map[string]any) error {
	if t, _ := s["type"].(string); t != "object" {
		return declErr(b.typeID, nil, "%s: type %v is not \"object\"", id, s["type"])
	}
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return declErr(b.typeID, nil, "%s: an object without properties", id)
	}
	m := b.record(id, name)
	names := make([]string, 0, len(props))
	for p := range props {
		names = append(names, p)
	}
	slices.Sort(names) // JSON objects are unordered; declaration order follows the names
	for i, p := range names {
		if !identRE.MatchString(p) {
			return declErr(b.typeID, nil, "%s: property %q is not an identifier", id, p)
		}
		ps, ok := props[p].(map[string]any)
		if !ok {
			return declErr(b.typeID, nil, "%s.%s: not a schema object", id, p)
		}
		f, err := b.field(id+"."+p, p, int32(i+1), name, ps)
		if err != nil {
			return err
		}
		m.Field = append(m.Field, f)
	}
	return nil
}

func (b *schemaBuilder) field(id, prop string, num int32, owner string, s map[string]any) (*descriptorpb.FieldDescriptorProto, error) {
	f := b.newField(id, prop, num)
	for _, k := range []string{"enum", "const", "pattern", "oneOf", "anyOf", "allOf"} {
		if _, ok := s[k]; ok {
			return nil, declErr(b.typeID, nil, "%s: %q is not supported", id, k)
		}
	}
	t, _ := s["type"].(string)
	switch t {
	case "boolean":
		f.Type = descriptorpb.FieldDescriptorProto_TYPE_BOOL.Enum()
	case "integer":
		f.Type = descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
		lo, hi := -float64(maxExact), float64(maxExact)
		if v, ok := s["minimum"].(float64); ok {
			lo = math.Max(lo, math.Ceil(v))
		}
		if v, ok := s["maximum"].(float64); ok {
			hi = math.Min(hi, math.Floor(v))
		}
		if lo > hi {
			return nil, declErr(b.typeID, nil, "%s: empty integer range", id)
		}
		setRange(f, strconv.FormatInt(int64(lo), 10), strconv.FormatInt(int64(hi), 10))
	case "string":
		switch s["format"] {
		case "int64":
			f.Type = descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum()
		case "uint64":
			f.Type = descriptorpb.FieldDescriptorProto_TYPE_UINT64.Enum()
		default:
			f.Type = descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
			if v, ok := s["maxLength"].(float64); ok {
				if v < 1 || v > math.MaxUint32 {
					return nil, declErr(b.typeID, nil, "%s: maxLength %v out of range", id, v)
				}
				setMaxBytes(f, uint32(v))
			}
		}
	case "object":
		nested := nestedName(owner, prop)
		if err := b.message(id, nested, s); err != nil {
			return nil, err
		}
		b.nest(f, nested)
	default:
		return nil, declErr(b.typeID, nil, "%s: type %v is not supported (boolean, integer, string or object)", id, s["type"])
	}
	return f, nil
}
