package interaction

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Bounds of the admitted source language and of the value wire. They are fixed: they are part
// of every schema document (its "wire" member) and therefore of every schema digest.
const (
	MaxDocumentBytes = 65536 // a value document, terminal LF included
	MaxStringBytes   = 4096  // default and ceiling of a string field, in UTF-8 bytes
	MaxBytesLength   = 4096  // default and ceiling of a bytes field, in elements
	MaxTypes         = 64    // distinct records and variants in one type graph
	MaxDepth         = 16    // type levels from the root down to the deepest nested type
	MaxIDBytes       = 128   // length of a stable id
	// MaxSchemaBytes is the output budget (SPX-Z203) of the canonical schema document and,
	// separately, of the provider projection.
	MaxSchemaBytes = 262144
)

// Compile derives the interaction schema rooted at md. md and every message it reaches must
// carry the interaction options (see doc.go); anything outside the admitted language is
// refused with SPX-Z202 naming the rule and the element, and an over-budget result with
// SPX-Z203.
func Compile(md protoreflect.MessageDescriptor) (*Schema, error) {
	b := &builder{
		done:     map[protoreflect.FullName]*Type{},
		visiting: map[protoreflect.FullName]bool{},
		byID:     map[string]protoreflect.FullName{},
	}
	root, err := b.typeOf(md)
	if err != nil {
		return nil, err
	}
	return newSchema(root, b.order)
}

// CompileFileSet builds set (a FileDescriptorSet with its imports, as `protoc
// --include_imports -o` or `buf build -o` writes it) and compiles the one message whose
// type_id is rootTypeID.
func CompileFileSet(set *descriptorpb.FileDescriptorSet, rootTypeID string) (*Schema, error) {
	if err := emptyOneof(set); err != nil {
		return nil, err
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, deriveErr(RuleSourceDescriptor, nil, "the descriptor set does not build: %v", err)
	}
	var found []protoreflect.MessageDescriptor
	files.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		found = appendWithTypeID(found, f.Messages(), rootTypeID)
		return true
	})
	switch len(found) {
	case 0:
		return nil, deriveErr(RuleRootNotFound, nil, "no message has type_id %s", quoteID(rootTypeID))
	case 1:
		return Compile(found[0])
	}
	sort.Slice(found, func(i, j int) bool { return found[i].FullName() < found[j].FullName() })
	return nil, deriveErr(RuleRootAmbiguous, found[1], "type_id %s is also declared by %s", quoteID(rootTypeID), found[0].FullName())
}

// emptyOneof finds a oneof without members, which protodesc would refuse without naming the
// interaction rule it breaks.
func emptyOneof(set *descriptorpb.FileDescriptorSet) error {
	var walk func(prefix string, msgs []*descriptorpb.DescriptorProto) error
	walk = func(prefix string, msgs []*descriptorpb.DescriptorProto) error {
		for _, m := range msgs {
			name := prefix + m.GetName()
			used := map[int32]bool{}
			for _, f := range m.GetField() {
				if f.OneofIndex != nil {
					used[f.GetOneofIndex()] = true
				}
			}
			for i, o := range m.GetOneofDecl() {
				if !used[int32(i)] {
					return &Error{Code: CodeUnsupportedSource, Rule: RuleVariantEmpty, Element: name + "." + o.GetName(), Message: "a variant needs at least one case"}
				}
			}
			if err := walk(name+".", m.GetNestedType()); err != nil {
				return err
			}
		}
		return nil
	}
	for _, f := range set.GetFile() {
		prefix := ""
		if f.GetPackage() != "" {
			prefix = f.GetPackage() + "."
		}
		if err := walk(prefix, f.GetMessageType()); err != nil {
			return err
		}
	}
	return nil
}

func appendWithTypeID(dst []protoreflect.MessageDescriptor, mds protoreflect.MessageDescriptors, id string) []protoreflect.MessageDescriptor {
	for i := 0; i < mds.Len(); i++ {
		md := mds.Get(i)
		if got, ok := messageTypeID(md); ok && got == id && !md.IsMapEntry() {
			dst = append(dst, md)
		}
		dst = appendWithTypeID(dst, md.Messages(), id)
	}
	return dst
}

// UnmarshalFileSet parses a binary FileDescriptorSet, refusing unparsable bytes with
// SPX-Z202 source.descriptor.
func UnmarshalFileSet(b []byte) (*descriptorpb.FileDescriptorSet, error) {
	set := new(descriptorpb.FileDescriptorSet)
	if err := (proto.UnmarshalOptions{Resolver: optionTypes}).Unmarshal(b, set); err != nil {
		return nil, deriveErr(RuleSourceDescriptor, nil, "not a binary FileDescriptorSet: %v", err)
	}
	return set, nil
}

// builder derives the type graph depth-first, so b.order ends up dependency-first.
type builder struct {
	done     map[protoreflect.FullName]*Type
	visiting map[protoreflect.FullName]bool
	byID     map[string]protoreflect.FullName
	order    []*Type
}

func (b *builder) typeOf(md protoreflect.MessageDescriptor) (*Type, error) {
	if t := b.done[md.FullName()]; t != nil {
		return t, nil
	}
	if err := checkMessage(md); err != nil {
		return nil, err
	}
	id, ok := messageTypeID(md)
	if !ok {
		return nil, deriveErr(RuleTypeIDMissing, md, "a record or variant needs the (beam_agents.v1.type_id) option")
	}
	if !validID(id) {
		return nil, deriveErr(RuleTypeIDInvalid, md, "type_id %s is not 1-%d bytes of [A-Za-z0-9._-] starting with a letter or digit", quoteID(id), MaxIDBytes)
	}
	if other, dup := b.byID[id]; dup {
		return nil, deriveErr(RuleTypeIDDuplicate, md, "type_id %s is also declared by %s", quoteID(id), other)
	}
	b.byID[id] = md.FullName()
	if len(b.byID) > MaxTypes {
		return nil, deriveErr(RuleGraphMaxTypes, md, "the type graph has more than %d records and variants", MaxTypes)
	}
	t := &Type{id: id, desc: md}
	b.visiting[md.FullName()] = true
	if err := b.shape(t); err != nil {
		return nil, err
	}
	delete(b.visiting, md.FullName())
	if t.height > MaxDepth {
		return nil, deriveErr(RuleGraphMaxDepth, md, "the type graph is %d levels deep below here; at most %d are admitted", t.height, MaxDepth)
	}
	t.index = len(b.order)
	b.order = append(b.order, t)
	b.done[md.FullName()] = t
	return t, nil
}

// checkMessage refuses messages that can never be a closed record or variant.
func checkMessage(md protoreflect.MessageDescriptor) error {
	if md.ParentFile() != nil && md.ParentFile().Package() == "google.protobuf" {
		return deriveErr(RuleTypeWellKnown, md, "well-known and descriptor types are not admitted; declare a message of your own")
	}
	if md.ExtensionRanges().Len() > 0 {
		return deriveErr(RuleTypeExtensible, md, "a message with extension ranges is not closed")
	}
	return nil
}

// shape fills in a record's fields or a variant's cases.
func (b *builder) shape(t *Type) error {
	md := t.desc
	oneofs := realOneofs(md)
	if len(oneofs) == 0 {
		t.kind = Record
		fl, h, err := b.fields(md.Fields())
		t.fields, t.height = fl, h+1
		return err
	}
	if len(oneofs) > 1 {
		return deriveErr(RuleVariantShape, oneofs[1], "a variant has exactly one oneof; this message declares %d", len(oneofs))
	}
	od := oneofs[0]
	for i := 0; i < md.Fields().Len(); i++ {
		if fd := md.Fields().Get(i); fd.ContainingOneof() != od {
			return deriveErr(RuleVariantShape, fd, "a variant's only members are its oneof's cases")
		}
	}
	if od.Fields().Len() == 0 {
		return deriveErr(RuleVariantEmpty, od, "a variant needs at least one case")
	}
	t.kind = Variant
	t.caseBy = map[string]*Case{}
	h := 0
	for i := 0; i < od.Fields().Len(); i++ {
		c, ch, err := b.variantCase(t, od.Fields().Get(i))
		if err != nil {
			return err
		}
		h = max(h, ch)
		t.caseBy[c.id] = c
		t.cases = append(t.cases, c)
	}
	t.height = h + 1
	return nil
}

func realOneofs(md protoreflect.MessageDescriptor) []protoreflect.OneofDescriptor {
	var r []protoreflect.OneofDescriptor
	for i := 0; i < md.Oneofs().Len(); i++ {
		if od := md.Oneofs().Get(i); !od.IsSynthetic() {
			r = append(r, od)
		}
	}
	return r
}

// variantCase derives one case and returns the height of its deepest field type.
func (b *builder) variantCase(t *Type, fd protoreflect.FieldDescriptor) (*Case, int, error) {
	opts := readFieldOptions(fd)
	if opts.id == nil {
		return nil, 0, deriveErr(RuleCaseIDMissing, fd, "a variant case needs the (beam_agents.v1.field_id) option")
	}
	id := *opts.id
	if !validID(id) {
		return nil, 0, deriveErr(RuleCaseIDInvalid, fd, "case id %s is not 1-%d bytes of [A-Za-z0-9._-] starting with a letter or digit", quoteID(id), MaxIDBytes)
	}
	if _, dup := t.caseBy[id]; dup {
		return nil, 0, deriveErr(RuleCaseIDDuplicate, fd, "case id %s is declared twice in this variant", quoteID(id))
	}
	if opts.maxBytes != nil || opts.minimum != nil || opts.maximum != nil {
		return nil, 0, deriveErr(RuleFieldBound, fd, "max_bytes, minimum and maximum do not apply to a variant case")
	}
	switch fd.Kind() {
	case protoreflect.MessageKind:
	case protoreflect.GroupKind:
		return nil, 0, deriveErr(RuleFieldGroup, fd, "groups (delimited message encoding) are not admitted")
	default:
		return nil, 0, deriveErr(RuleCaseNotMessage, fd, "a variant case must be a message whose fields the case carries; got %s", fd.Kind())
	}
	payload := fd.Message()
	if err := checkMessage(payload); err != nil {
		return nil, 0, err
	}
	if b.visiting[payload.FullName()] {
		return nil, 0, deriveErr(RuleTypeRecursive, fd, "the type graph must be acyclic; %s is already being derived", payload.FullName())
	}
	if len(realOneofs(payload)) > 0 {
		return nil, 0, deriveErr(RuleCasePayload, fd, "a case's payload must be a record; wrap the nested variant in a field")
	}
	b.visiting[payload.FullName()] = true
	fl, h, err := b.fields(payload.Fields())
	delete(b.visiting, payload.FullName())
	c := &Case{id: id, index: len(t.cases), owner: t, desc: fd, fields: fl}
	c.prefix = `"case":"` + id + `","fields":`
	return c, h, err
}

// fields derives a record's or a case's fields and returns the height of the deepest nested
// field type (0 when none is nested).
func (b *builder) fields(fds protoreflect.FieldDescriptors) (fieldList, int, error) {
	fl := fieldList{ids: map[string]*Field{}}
	h := 0
	for i := 0; i < fds.Len(); i++ {
		f, err := b.field(fds.Get(i))
		if err != nil {
			return fl, 0, err
		}
		if _, dup := fl.ids[f.id]; dup {
			return fl, 0, deriveErr(RuleFieldIDDuplicate, f.desc, "field id %s is declared twice in this type", quoteID(f.id))
		}
		if f.nested != nil {
			h = max(h, f.nested.height)
		}
		f.index = len(fl.list)
		fl.ids[f.id] = f
		fl.list = append(fl.list, f)
	}
	return fl, h, nil
}

func (b *builder) field(fd protoreflect.FieldDescriptor) (*Field, error) {
	opts := readFieldOptions(fd)
	if opts.id == nil {
		return nil, deriveErr(RuleFieldIDMissing, fd, "a field needs the (beam_agents.v1.field_id) option")
	}
	if !validID(*opts.id) {
		return nil, deriveErr(RuleFieldIDInvalid, fd, "field id %s is not 1-%d bytes of [A-Za-z0-9._-] starting with a letter or digit", quoteID(*opts.id), MaxIDBytes)
	}
	f := &Field{id: *opts.id, desc: fd, key: `"` + *opts.id + `":`}
	if err := checkCardinality(fd); err != nil {
		return nil, err
	}
	if err := b.representation(f); err != nil {
		return nil, err
	}
	if err := applyBounds(f, opts); err != nil {
		return nil, err
	}
	return f, nil
}

func checkCardinality(fd protoreflect.FieldDescriptor) error {
	switch {
	case fd.IsMap():
		return deriveErr(RuleFieldMap, fd, "map fields are not admitted")
	case fd.IsList():
		return deriveErr(RuleFieldRepeated, fd, "repeated fields are not admitted")
	case fd.Cardinality() == protoreflect.Required:
		return deriveErr(RuleFieldRequired, fd, "required fields are not admitted")
	case fd.HasDefault():
		return deriveErr(RuleFieldDefault, fd, "explicit default values are not admitted")
	}
	return nil
}

// representation maps the protobuf kind. The varint, zigzag and fixed-width encodings of one
// integer width are the same representation: the interaction wire carries values, not
// protobuf encodings.
func (b *builder) representation(f *Field) error {
	fd := f.desc
	switch fd.Kind() {
	case protoreflect.BoolKind:
		f.rep = Bool
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		f.rep = I32
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		f.rep = I64
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		f.rep = U32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		f.rep = U64
	case protoreflect.StringKind:
		f.rep = String
	case protoreflect.BytesKind:
		f.rep = Bytes
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return deriveErr(RuleFieldFloat, fd, "floating-point fields are not admitted; use an integer in fixed units")
	case protoreflect.EnumKind:
		return deriveErr(RuleFieldEnum, fd, "enum fields are not admitted; use a variant")
	case protoreflect.GroupKind:
		return deriveErr(RuleFieldGroup, fd, "groups (delimited message encoding) are not admitted")
	case protoreflect.MessageKind:
		if b.visiting[fd.Message().FullName()] {
			return deriveErr(RuleTypeRecursive, fd, "the type graph must be acyclic; %s is already being derived", fd.Message().FullName())
		}
		t, err := b.typeOf(fd.Message())
		if err != nil {
			return err
		}
		f.rep, f.nested = Nested, t
	default:
		return deriveErr(RuleSourceDescriptor, fd, "unknown field kind %s", fd.Kind())
	}
	return nil
}

func applyBounds(f *Field, o fieldOptions) error {
	fd := f.desc
	if o.maxBytes != nil && f.rep != String && f.rep != Bytes {
		return deriveErr(RuleFieldBound, fd, "max_bytes applies to string and bytes fields only")
	}
	if (o.minimum != nil || o.maximum != nil) && !f.rep.IsInteger() {
		return deriveErr(RuleFieldBound, fd, "minimum and maximum apply to integer fields only")
	}
	switch {
	case f.rep == String || f.rep == Bytes:
		f.maxBytes = MaxStringBytes
		if o.maxBytes != nil {
			if *o.maxBytes > MaxStringBytes {
				return deriveErr(RuleFieldBound, fd, "max_bytes %d exceeds the ceiling %d", *o.maxBytes, MaxStringBytes)
			}
			f.maxBytes = int(*o.maxBytes)
		}
	case f.rep.IsInteger():
		return applyRange(f, o)
	}
	return nil
}

func applyRange(f *Field, o fieldOptions) error {
	lo, hi := f.rep.Range()
	f.min, f.max = lo, hi
	for _, b := range []struct {
		name string
		text *string
		dst  *Int
	}{{"minimum", o.minimum, &f.min}, {"maximum", o.maximum, &f.max}} {
		if b.text == nil {
			continue
		}
		v, ok := parseInt(*b.text)
		if !ok {
			return deriveErr(RuleFieldBound, f.desc, "%s %s is not a canonical decimal integer", b.name, quoteID(*b.text))
		}
		if v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
			return deriveErr(RuleFieldBound, f.desc, "%s %s is outside the %s range [%s, %s]", b.name, v, f.rep, lo, hi)
		}
		*b.dst = v
	}
	if f.min.Cmp(f.max) > 0 {
		return deriveErr(RuleFieldBound, f.desc, "minimum %s exceeds maximum %s", f.min, f.max)
	}
	return nil
}

// validID admits 1..MaxIDBytes bytes of [A-Za-z0-9._-] starting with a letter or digit, so
// an id is safe verbatim as a JSON key, a $defs name and a JSON Pointer.
func validID(s string) bool {
	if s == "" || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

func quoteID(s string) string { return fmt.Sprintf("%q", truncate(s, 64)) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
