package interaction

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// CopyTo resets m and copies the value into it, so users get their generated Go type (or a
// dynamicpb message). m's message must match the value's type: the same full name and, for
// every field the value carries, a field with the same number, name and kind (recursively);
// otherwise CopyTo returns an ErrTypeMismatch error and m is left reset. For a variant, the
// chosen case's oneof member is set. Fields with explicit presence are always set.
func (v *Value) CopyTo(m proto.Message) error {
	if m == nil {
		return mismatch("", "CopyTo needs a non-nil message")
	}
	proto.Reset(m)
	return copyValue(v, m.ProtoReflect())
}

func copyValue(v *Value, m protoreflect.Message) error {
	if got, want := m.Descriptor().FullName(), v.typ.desc.FullName(); got != want {
		return mismatch(string(got), "the message is %s; the value's type %q was derived from %s", got, v.typ.id, want)
	}
	if v.cas != nil {
		fd, err := matchField(m.Descriptor(), v.cas.desc)
		if err != nil {
			return err
		}
		payload := m.Mutable(fd).Message()
		return copyFields(v.fields, payload)
	}
	return copyFields(v.fields, m)
}

func copyFields(fields []FieldValue, m protoreflect.Message) error {
	for i := range fields {
		fv := &fields[i]
		fd, err := matchField(m.Descriptor(), fv.field.desc)
		if err != nil {
			return err
		}
		if fv.field.rep == Nested {
			if err := copyValue(fv.value, m.Mutable(fd).Message()); err != nil {
				return err
			}
			continue
		}
		m.Set(fd, scalarOf(fv))
	}
	return nil
}

// matchField finds in md the counterpart of the compiled field want.
func matchField(md protoreflect.MessageDescriptor, want protoreflect.FieldDescriptor) (protoreflect.FieldDescriptor, error) {
	fd := md.Fields().ByNumber(want.Number())
	if fd == nil || fd.Name() != want.Name() || fd.Kind() != want.Kind() || fd.Cardinality() != want.Cardinality() {
		return nil, mismatch(string(md.FullName()), "the message has no field %d %s of kind %s", want.Number(), want.Name(), want.Kind())
	}
	if fd.Kind() == protoreflect.MessageKind && fd.Message().FullName() != want.Message().FullName() {
		return nil, mismatch(string(fd.FullName()), "field %s is %s, not %s", fd.Name(), fd.Message().FullName(), want.Message().FullName())
	}
	return fd, nil
}

func scalarOf(fv *FieldValue) protoreflect.Value {
	switch fv.field.rep {
	case Bool:
		return protoreflect.ValueOfBool(fv.bits == 1)
	case I32:
		return protoreflect.ValueOfInt32(int32(int64(fv.bits)))
	case I64:
		return protoreflect.ValueOfInt64(int64(fv.bits))
	case U32:
		return protoreflect.ValueOfUint32(uint32(fv.bits))
	case U64:
		return protoreflect.ValueOfUint64(fv.bits)
	case String:
		return protoreflect.ValueOfString(fv.text)
	}
	return protoreflect.ValueOfBytes([]byte(fv.text))
}

func mismatch(element, format string, args ...any) *Error {
	return &Error{Code: CodeTypeMismatch, Rule: RuleDescriptor, Element: element, Message: fmt.Sprintf(format, args...)}
}

// ValueOf reads m (of the root type) into a root Value with its canonical document, applying
// every rule Decode applies to the same value: a variant needs a case set (value.case),
// strings must be UTF-8 (utf8), and every bound holds (value.integer_range,
// value.string_bytes, value.bytes_length), as does the document bound (document_bytes).
// Unset singular fields read as their defaults. So Decode(ValueOf(m).Canonical()) admits the
// same value: ValueOf is how a program (a scripted model, a test) produces proposals.
func (s *Schema) ValueOf(m proto.Message) (*Value, error) {
	if m == nil {
		return nil, mismatch("", "ValueOf needs a non-nil message")
	}
	v, err := readValue(s.root, m.ProtoReflect(), "$.value")
	if err != nil {
		return nil, err
	}
	doc := appendDocument(nil, s, v)
	if len(doc) > MaxDocumentBytes {
		return nil, decodeErr(CodeNotAdmitted, RuleDocumentBytes, "$", "the document would be %d bytes; at most %d are admitted", len(doc), MaxDocumentBytes)
	}
	v.doc = string(doc)
	return v, nil
}

func readValue(t *Type, m protoreflect.Message, path string) (*Value, error) {
	if got, want := m.Descriptor().FullName(), t.desc.FullName(); got != want {
		return nil, mismatch(string(got), "the message is %s; type %q was derived from %s", got, t.id, want)
	}
	v := &Value{typ: t}
	list, src := &t.fields, m
	if t.kind == Variant {
		c, err := readCase(t, m, path)
		if err != nil {
			return nil, err
		}
		fd, err := matchField(m.Descriptor(), c.desc)
		if err != nil {
			return nil, err
		}
		v.cas, list, src, path = c, &c.fields, m.Get(fd).Message(), path+".fields"
	} else {
		path += ".fields"
	}
	v.fields = make([]FieldValue, len(list.list))
	for i, f := range list.list {
		fv, err := readField(f, src, path+canonjson.MemberPath(f.id))
		if err != nil {
			return nil, err
		}
		v.fields[i] = fv
	}
	return v, nil
}

// readCase returns the case whose oneof member is set in m.
func readCase(t *Type, m protoreflect.Message, path string) (*Case, error) {
	od := m.Descriptor().Oneofs().ByName(t.cases[0].desc.ContainingOneof().Name())
	if od == nil {
		return nil, mismatch(string(m.Descriptor().FullName()), "the message has no oneof %s", t.cases[0].desc.ContainingOneof().Name())
	}
	set := m.WhichOneof(od)
	if set == nil {
		return nil, decodeErr(CodeNotAdmitted, RuleCase, path+".case", "no case of %q is set", t.id)
	}
	for _, c := range t.cases {
		if c.desc.Number() == set.Number() {
			return c, nil
		}
	}
	return nil, mismatch(string(set.FullName()), "oneof member %s is not a case of %q", set.Name(), t.id)
}

func readField(f *Field, m protoreflect.Message, path string) (FieldValue, error) {
	fv := FieldValue{field: f}
	fd, err := matchField(m.Descriptor(), f.desc)
	if err != nil {
		return fv, err
	}
	x := m.Get(fd)
	switch f.rep {
	case Bool:
		if x.Bool() {
			fv.bits = 1
		}
	case I32, I64:
		fv.bits = uint64(x.Int())
		return fv, checkRange(f, IntOf(x.Int()), path)
	case U32, U64:
		fv.bits = x.Uint()
		return fv, checkRange(f, uintOf(x.Uint()), path)
	case String:
		fv.text = x.String()
		if !utf8.ValidString(fv.text) {
			return fv, decodeErr(CodeNotAdmitted, RuleUTF8, path, "the string is not UTF-8")
		}
		if len(fv.text) > f.maxBytes {
			return fv, decodeErr(CodeNotAdmitted, RuleStringBytes, path, "the string is %d UTF-8 bytes; at most %d are admitted", len(fv.text), f.maxBytes)
		}
	case Bytes:
		fv.text = string(x.Bytes())
		if len(fv.text) > f.maxBytes {
			return fv, decodeErr(CodeNotAdmitted, RuleBytesLength, path, "%d elements; at most %d are admitted", len(fv.text), f.maxBytes)
		}
	case Nested:
		fv.value, err = readValue(f.nested, x.Message(), path)
	}
	return fv, err
}

func checkRange(f *Field, v Int, path string) error {
	if v.Cmp(f.min) < 0 || v.Cmp(f.max) > 0 {
		return decodeErr(CodeNotAdmitted, RuleIntegerRange, path, "%s is outside [%s, %s]", v, f.min, f.max)
	}
	return nil
}
