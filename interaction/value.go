package interaction

import (
	"fmt"
)

// Value is one admitted value of a record or a variant. It is immutable.
//
// A Value returned by [Schema.Decode] or [Schema.ValueOf] is a root value and carries its
// canonical value document; values reached through [FieldValue.Nested] are parts of it.
type Value struct {
	typ    *Type
	cas    *Case // the chosen case of a variant; nil for a record
	fields []FieldValue
	doc    string // the canonical value document of a root value; "" otherwise
}

// Type returns the value's type.
func (v *Value) Type() *Type { return v.typ }

// TypeID returns the stable id of the value's type.
func (v *Value) TypeID() string { return v.typ.id }

// Case returns the chosen case of a variant value, or nil for a record value.
func (v *Value) Case() *Case { return v.cas }

// CaseID returns the stable id of the chosen case, or "" for a record value.
func (v *Value) CaseID() string {
	if v.cas == nil {
		return ""
	}
	return v.cas.id
}

// NumFields returns the number of fields (of the record, or of the chosen case).
func (v *Value) NumFields() int { return len(v.fields) }

// Field returns the i-th field value in declaration order.
func (v *Value) Field(i int) FieldValue { return v.fields[i] }

// Lookup returns the field value with the given stable id.
func (v *Value) Lookup(id string) (FieldValue, bool) {
	for _, fv := range v.fields {
		if fv.field.id == id {
			return fv, true
		}
	}
	return FieldValue{}, false
}

// Canonical returns a copy of the canonical value document of a root value, terminal LF
// included: for a decoded value, exactly the admitted bytes. It returns nil for a nested value.
func (v *Value) Canonical() []byte {
	if v.doc == "" {
		return nil
	}
	return []byte(v.doc)
}

// CanonicalString returns the canonical value document of a root value as a string, without
// copying it: for a caller that needs it as a string field (a reply's message, a step
// record). It returns "" for a nested value.
func (v *Value) CanonicalString() string { return v.doc }

// JSON returns the canonical JSON of the value part alone: {"fields":{…}} for a record,
// {"case":"…","fields":{…}} for a variant (no LF).
func (v *Value) JSON() []byte { return appendValue(nil, v) }

// FieldsJSON returns the canonical JSON object of the value's fields (of the chosen case, for
// a variant): declaration-ordered stable ids, decimal-string integers, no LF. It is the
// deterministic rendering to use wherever one case's fields become, for example, a tool
// call's arguments.
func (v *Value) FieldsJSON() []byte { return appendFields(nil, v) }

// String returns JSON(), for debugging.
func (v *Value) String() string { return string(v.JSON()) }

// FieldValue is one field of a Value. Its accessors follow the field's Representation and
// panic when called for another one, like protoreflect.Value's.
type FieldValue struct {
	field *Field
	bits  uint64 // bool as 0/1, U32/U64 as is, I32/I64 as the two's complement
	text  string // String, and Bytes as its raw bytes
	value *Value // Nested
}

// Field returns the field's declaration.
func (fv FieldValue) Field() *Field { return fv.field }

// StableID returns the field's stable id.
func (fv FieldValue) StableID() string { return fv.field.id }

// Representation returns the field's representation.
func (fv FieldValue) Representation() Representation { return fv.field.rep }

// Bool returns a Bool field's value.
func (fv FieldValue) Bool() bool {
	fv.want(Bool)
	return fv.bits == 1
}

// Int returns an I32 or I64 field's value.
func (fv FieldValue) Int() int64 {
	if r := fv.field.rep; r != I32 && r != I64 {
		fv.want(I64)
	}
	return int64(fv.bits)
}

// Uint returns a U32 or U64 field's value.
func (fv FieldValue) Uint() uint64 {
	if r := fv.field.rep; r != U32 && r != U64 {
		fv.want(U64)
	}
	return fv.bits
}

// Integer returns any integer field's value as an exact Int.
func (fv FieldValue) Integer() Int {
	switch fv.field.rep {
	case I32, I64:
		return IntOf(int64(fv.bits))
	case U32, U64:
		return uintOf(fv.bits)
	}
	fv.want(I64)
	return Int{}
}

// Text returns a String field's value.
func (fv FieldValue) Text() string {
	fv.want(String)
	return fv.text
}

// Bytes returns a copy of a Bytes field's value.
func (fv FieldValue) Bytes() []byte {
	fv.want(Bytes)
	return []byte(fv.text)
}

// Nested returns a Nested field's value.
func (fv FieldValue) Nested() *Value {
	fv.want(Nested)
	return fv.value
}

// Interface returns the value as bool, int64, uint64, string, []byte or *Value.
func (fv FieldValue) Interface() any {
	switch fv.field.rep {
	case Bool:
		return fv.bits == 1
	case I32, I64:
		return int64(fv.bits)
	case U32, U64:
		return fv.bits
	case String:
		return fv.text
	case Bytes:
		return []byte(fv.text)
	}
	return fv.value
}

func (fv FieldValue) want(r Representation) {
	if fv.field.rep != r {
		panic(fmt.Sprintf("interaction: field %q is %s, not %s", fv.field.id, fv.field.rep, r))
	}
}
