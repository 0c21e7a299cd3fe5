package tool

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
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
	b := &schemaBuilder{typeID: typeID}
	name, err := b.message(typeID, "Args", root)
	if err != nil {
		return nil, err
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("beamagents/tools/" + typeID + ".proto"),
		Package:     proto.String(protoPackage(typeID)),
		Syntax:      proto.String("proto3"),
		Dependency:  []string{"beam_agents/v1/interaction_options.proto"},
		MessageType: b.msgs,
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		return nil, declErr(typeID, err, "derived descriptor does not build")
	}
	s, err := interaction.Compile(fd.Messages().ByName(name))
	if err != nil {
		return nil, declErr(typeID, err, "derived schema does not compile")
	}
	return s, nil
}

type schemaBuilder struct {
	typeID string
	msgs   []*descriptorpb.DescriptorProto
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func protoPackage(typeID string) string {
	var sb strings.Builder
	sb.WriteString("beamagents.tools.")
	for _, r := range typeID {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

func (b *schemaBuilder) message(id, name string, s map[string]any) (protoreflect.Name, error) {
	if t, _ := s["type"].(string); t != "object" {
		return "", declErr(b.typeID, nil, "%s: type %v is not \"object\"", id, s["type"])
	}
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return "", declErr(b.typeID, nil, "%s: an object without properties", id)
	}
	opts := &descriptorpb.MessageOptions{}
	proto.SetExtension(opts, pb.E_TypeId, id)
	m := &descriptorpb.DescriptorProto{Name: proto.String(name), Options: opts}
	b.msgs = append(b.msgs, m)
	names := make([]string, 0, len(props))
	for p := range props {
		names = append(names, p)
	}
	slices.Sort(names) // JSON objects are unordered; declaration order follows the names
	for i, p := range names {
		if !identRE.MatchString(p) {
			return "", declErr(b.typeID, nil, "%s: property %q is not an identifier", id, p)
		}
		ps, ok := props[p].(map[string]any)
		if !ok {
			return "", declErr(b.typeID, nil, "%s.%s: not a schema object", id, p)
		}
		f, err := b.field(id+"."+p, p, int32(i+1), name, ps)
		if err != nil {
			return "", err
		}
		m.Field = append(m.Field, f)
	}
	return protoreflect.Name(name), nil
}

func (b *schemaBuilder) field(id, prop string, num int32, owner string, s map[string]any) (*descriptorpb.FieldDescriptorProto, error) {
	opts := &descriptorpb.FieldOptions{}
	proto.SetExtension(opts, pb.E_FieldId, id)
	f := &descriptorpb.FieldDescriptorProto{
		Name: proto.String(prop), Number: proto.Int32(num), JsonName: proto.String(prop),
		Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Options: opts,
	}
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
		proto.SetExtension(opts, pb.E_Minimum, strconv.FormatInt(int64(lo), 10))
		proto.SetExtension(opts, pb.E_Maximum, strconv.FormatInt(int64(hi), 10))
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
				proto.SetExtension(opts, pb.E_MaxBytes, uint32(v))
			}
		}
	case "object":
		nested := owner + "_" + prop
		if _, err := b.message(id, nested, s); err != nil {
			return nil, err
		}
		f.Type = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
		f.TypeName = proto.String("." + protoPackage(b.typeID) + "." + nested)
	default:
		return nil, declErr(b.typeID, nil, "%s: type %v is not supported (boolean, integer, string or object)", id, s["type"])
	}
	return f, nil
}
