package tool

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
)

// Struct derives a tool's argument schema from the Go struct T: the same kind of closed
// schema a .proto compiles to (built through the descriptor FromJSONSchema builds too), with
// the stable ids typeID for the root and typeID + "." + property, dotted through nested
// records, for fields, in field order. The schema is presented to a model by property names
// (interaction.CompilePresented). Each exported field is one property:
//
//   - its name is the field's `json` tag name (the field name without one; "-" skips it);
//   - bool, int32, int64, uint32, uint64, string and []byte map to the leaves of the same
//     names, a struct (or a pointer to one) to a nested record;
//   - the `tool` tag bounds it: "maxlen=N" for a string (UTF-8 bytes) or []byte, default and
//     ceiling 4096; "min=N,max=M" for an integer, default the Go type's range;
//   - the `desc` tag is its description, shown to the model.
//
// Anything else (int, float, map, other slices, interface, an embedded field, a type that
// contains itself, a `json:",string"` field) is refused with ErrDeclaration naming the field
// (Error.Field).
func Struct[T any](typeID string) (*interaction.Schema, error) {
	return structSchema(reflect.TypeFor[T](), typeID)
}

func structSchema(rt reflect.Type, typeID string) (*interaction.Schema, error) {
	b := &structBuilder{argsFile: argsFile{typeID: typeID}, visiting: map[reflect.Type]bool{}}
	if rt.Kind() != reflect.Struct {
		return nil, b.fieldErr(rt.String(), "%s is not a struct", rt)
	}
	if err := b.message(rt, typeID, "Args", rt.Name()); err != nil {
		return nil, err
	}
	return b.compile("Args", true)
}

// structBuilder reads a Go struct type into the argument records' descriptor.
type structBuilder struct {
	argsFile
	visiting map[reflect.Type]bool // the struct types being read, to refuse a cycle
}

func (b *structBuilder) fieldErr(field, format string, args ...any) error {
	return &Error{Code: CodeDeclaration, Tool: b.typeID, Field: field, Detail: field + ": " + fmt.Sprintf(format, args...)}
}

// message appends the record of struct type rt, path naming it in errors (Type.Field…).
func (b *structBuilder) message(rt reflect.Type, id, name, path string) error {
	if b.visiting[rt] {
		return b.fieldErr(path, "%s contains itself", rt)
	}
	b.visiting[rt] = true
	defer delete(b.visiting, rt)
	m := b.record(id, name)
	for i := range rt.NumField() {
		sf := rt.Field(i)
		fpath := path + "." + sf.Name
		if sf.Anonymous {
			return b.fieldErr(fpath, "an embedded field is not supported; name it")
		}
		if !sf.IsExported() {
			continue
		}
		prop, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case prop == "-" && opts == "":
			continue
		case prop == "":
			prop = sf.Name
		}
		if !identRE.MatchString(prop) {
			return b.fieldErr(fpath, "property %q is not an identifier", prop)
		}
		if strings.Contains(","+opts+",", ",string,") {
			return b.fieldErr(fpath, "the `json:\",string\"` option is not supported: integers are exact as they are")
		}
		f := b.newField(id+"."+prop, prop, int32(len(m.Field)+1))
		if err := b.leaf(f, sf.Type, sf.Tag.Get("tool"), name, prop, fpath); err != nil {
			return err
		}
		if d := sf.Tag.Get("desc"); d != "" {
			b.describe(m, len(m.Field), d)
		}
		m.Field = append(m.Field, f)
	}
	if len(m.Field) == 0 {
		return b.fieldErr(path, "a struct without exported fields")
	}
	return nil
}

// typeIDOf is the stable id of f: a nested record's type id is its field's.
func (b *structBuilder) typeIDOf(f *descriptorpb.FieldDescriptorProto) string {
	return proto.GetExtension(f.GetOptions(), pb.E_FieldId).(string)
}

// leaves maps the Go kinds admitted as scalars to their protobuf types.
var leaves = map[reflect.Kind]descriptorpb.FieldDescriptorProto_Type{
	reflect.Bool:   descriptorpb.FieldDescriptorProto_TYPE_BOOL,
	reflect.Int32:  descriptorpb.FieldDescriptorProto_TYPE_INT32,
	reflect.Int64:  descriptorpb.FieldDescriptorProto_TYPE_INT64,
	reflect.Uint32: descriptorpb.FieldDescriptorProto_TYPE_UINT32,
	reflect.Uint64: descriptorpb.FieldDescriptorProto_TYPE_UINT64,
	reflect.String: descriptorpb.FieldDescriptorProto_TYPE_STRING,
}

// leaf sets f's type from the Go type t and its bounds from the tool tag.
func (b *structBuilder) leaf(f *descriptorpb.FieldDescriptorProto, t reflect.Type, tag, owner, prop, path string) error {
	bounds, err := parseBounds(tag)
	if err != nil {
		return b.fieldErr(path, "tool tag: %v", err)
	}
	k := t.Kind()
	if k == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		t, k = t.Elem(), reflect.Struct
	}
	switch {
	case k == reflect.Struct:
		if len(bounds) > 0 {
			return b.fieldErr(path, "a nested struct takes no bounds")
		}
		nested := nestedName(owner, prop)
		b.nest(f, nested)
		return b.message(t, b.typeIDOf(f), nested, path)
	case k == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		f.Type = descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum()
		return b.maxLen(f, bounds, path)
	case k == reflect.String:
		f.Type = leaves[k].Enum()
		return b.maxLen(f, bounds, path)
	case leaves[k] != 0 && k != reflect.Bool:
		f.Type = leaves[k].Enum()
		return b.intRange(f, k, bounds, path)
	case k == reflect.Bool:
		f.Type = leaves[k].Enum()
		if len(bounds) > 0 {
			return b.fieldErr(path, "a bool takes no bounds")
		}
		return nil
	case k >= reflect.Int && k <= reflect.Uint64:
		return b.fieldErr(path, "%s is not supported: use int32, int64, uint32 or uint64", t)
	}
	return b.fieldErr(path, "%s is not supported (bool, int32, int64, uint32, uint64, string, []byte or a struct)", t)
}

// parseBounds reads a tool tag: comma-separated key=value pairs.
func parseBounds(tag string) (map[string]string, error) {
	out := map[string]string{}
	if tag == "" {
		return out, nil
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || (k != "maxlen" && k != "min" && k != "max") {
			return nil, fmt.Errorf("%q is not maxlen=N, min=N or max=N", kv)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

func (b *structBuilder) maxLen(f *descriptorpb.FieldDescriptorProto, bounds map[string]string, path string) error {
	for k, v := range bounds {
		if k != "maxlen" {
			return b.fieldErr(path, "%s applies to integers only", k)
		}
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil || n < 1 || n > interaction.MaxStringBytes {
			return b.fieldErr(path, "maxlen %q is not between 1 and %d", v, interaction.MaxStringBytes)
		}
		setMaxBytes(f, uint32(n))
	}
	return nil
}

func (b *structBuilder) intRange(f *descriptorpb.FieldDescriptorProto, k reflect.Kind, bounds map[string]string, path string) error {
	if _, ok := bounds["maxlen"]; ok {
		return b.fieldErr(path, "maxlen applies to strings and []byte only")
	}
	bits := map[reflect.Kind]int{reflect.Int32: 32, reflect.Uint32: 32, reflect.Int64: 64, reflect.Uint64: 64}[k]
	signed := k == reflect.Int32 || k == reflect.Int64
	lo, hi := "0", strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	if signed {
		lo, hi = strconv.FormatInt(math.MinInt64>>(64-bits), 10), strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
	}
	for _, e := range []struct {
		key string
		dst *string
	}{{"min", &lo}, {"max", &hi}} {
		v, ok := bounds[e.key]
		if !ok {
			continue
		}
		var err error
		if signed {
			var n int64
			n, err = strconv.ParseInt(v, 10, bits)
			*e.dst = strconv.FormatInt(n, 10)
		} else {
			var n uint64
			n, err = strconv.ParseUint(v, 10, bits)
			*e.dst = strconv.FormatUint(n, 10)
		}
		if err != nil {
			return b.fieldErr(path, "%s %q is not a %s", e.key, v, k)
		}
	}
	setRange(f, lo, hi)
	return nil
}
