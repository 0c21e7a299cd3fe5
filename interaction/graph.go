package interaction

import (
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Kind says whether a Type is a record or a variant.
type Kind uint8

// Type kinds.
const (
	Record  Kind = iota + 1 // a message without a oneof: a closed set of fields
	Variant                 // a message whose only members form one oneof: exactly one case
)

func (k Kind) String() string {
	switch k {
	case Record:
		return "record"
	case Variant:
		return "variant"
	}
	return "invalid"
}

// Representation is the wire representation of a field.
type Representation uint8

// Representations. I32, I64, U32 and U64 travel as canonical decimal strings; Bytes as an
// array of integers 0..255; Nested as the value of another Type.
const (
	Bool Representation = iota + 1
	I32
	I64
	U32
	U64
	String
	Bytes
	Nested
)

var representationNames = [...]string{Bool: "bool", I32: "i32", I64: "i64", U32: "u32", U64: "u64", String: "string", Bytes: "bytes", Nested: "nested"}

func (r Representation) String() string {
	if int(r) < len(representationNames) && representationNames[r] != "" {
		return representationNames[r]
	}
	return "invalid"
}

// IsInteger reports whether r is one of I32, I64, U32, U64.
func (r Representation) IsInteger() bool { return r >= I32 && r <= U64 }

// Range returns the full range of an integer representation.
func (r Representation) Range() (min, max Int) {
	switch r {
	case I32:
		return IntOf(-1 << 31), IntOf(1<<31 - 1)
	case I64:
		return IntOf(-1 << 63), IntOf(1<<63 - 1)
	case U32:
		return uintOf(0), uintOf(1<<32 - 1)
	case U64:
		return uintOf(0), uintOf(1<<64 - 1)
	}
	return Int{}, Int{}
}

// Type is one record or variant of a compiled schema. It is immutable.
type Type struct {
	id     string
	kind   Kind
	desc   protoreflect.MessageDescriptor
	index  int
	height int // 1 for a type without nested fields
	fields fieldList
	cases  []*Case
	caseBy map[string]*Case
}

// StableID returns the type's persistent stable id (its type_id option).
func (t *Type) StableID() string { return t.id }

// Kind returns Record or Variant.
func (t *Type) Kind() Kind { return t.kind }

// Descriptor returns the protobuf message the type was derived from.
func (t *Type) Descriptor() protoreflect.MessageDescriptor { return t.desc }

// Index returns the type's position in the schema's dependency-first type list.
func (t *Type) Index() int { return t.index }

// NumFields returns the number of fields of a record (0 for a variant).
func (t *Type) NumFields() int { return len(t.fields.list) }

// Field returns the i-th field of a record in declaration order.
func (t *Type) Field(i int) *Field { return t.fields.list[i] }

// NumCases returns the number of cases of a variant (0 for a record).
func (t *Type) NumCases() int { return len(t.cases) }

// Case returns the i-th case of a variant in declaration order.
func (t *Type) Case(i int) *Case { return t.cases[i] }

// CaseByID returns the variant case with the given stable id.
func (t *Type) CaseByID(id string) (*Case, bool) {
	c, ok := t.caseBy[id]
	return c, ok
}

// Case is one case of a variant: a oneof member whose message's fields are the case's fields.
type Case struct {
	id     string
	index  int
	owner  *Type
	desc   protoreflect.FieldDescriptor
	fields fieldList
	// prefix is `"case":"<id>","fields":` — the canonical bytes that open the case's value
	// after its '{'.
	prefix string
}

// StableID returns the case's persistent stable id (the field_id of its oneof member).
func (c *Case) StableID() string { return c.id }

// Index returns the case's position among its variant's cases.
func (c *Case) Index() int { return c.index }

// Variant returns the variant the case belongs to.
func (c *Case) Variant() *Type { return c.owner }

// Descriptor returns the oneof member the case was derived from; its Message() is the payload.
func (c *Case) Descriptor() protoreflect.FieldDescriptor { return c.desc }

// NumFields returns the number of fields the case carries.
func (c *Case) NumFields() int { return len(c.fields.list) }

// Field returns the i-th field of the case in declaration order.
func (c *Case) Field(i int) *Field { return c.fields.list[i] }

// Field is one field of a record or of a variant case.
type Field struct {
	id       string
	index    int
	desc     protoreflect.FieldDescriptor
	rep      Representation
	min, max Int
	maxBytes int
	nested   *Type
	// key is `"<id>":`, the canonical bytes that introduce the field's member.
	key string
}

// StableID returns the field's persistent stable id (its field_id option).
func (f *Field) StableID() string { return f.id }

// Index returns the field's position in declaration order.
func (f *Field) Index() int { return f.index }

// Descriptor returns the protobuf field the field was derived from.
func (f *Field) Descriptor() protoreflect.FieldDescriptor { return f.desc }

// Representation returns the field's wire representation.
func (f *Field) Representation() Representation { return f.rep }

// Range returns the inclusive bounds of an integer field (zero values otherwise).
func (f *Field) Range() (min, max Int) { return f.min, f.max }

// MaxBytes returns the bound of a string field (UTF-8 bytes) or a bytes field (elements);
// 0 for other representations.
func (f *Field) MaxBytes() int { return f.maxBytes }

// Nested returns the type of a Nested field (nil otherwise).
func (f *Field) Nested() *Type { return f.nested }

type fieldList struct {
	list []*Field
	ids  map[string]*Field
}

func (l *fieldList) byID(id string) (*Field, bool) {
	f, ok := l.ids[id]
	return f, ok
}
