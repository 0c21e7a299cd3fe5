package stream

import "github.com/beamagents/beamagents/interaction"

// Category is what the grammar expects next.
type Category uint8

// Categories.
const (
	ExpectNothing Category = iota // the decoder is terminal, or only Finish remains
	ExpectLiteral                 // fixed bytes: envelope, braces, keys
	ExpectCase                    // a case id of a variant
	ExpectBool
	ExpectInteger
	ExpectString
	ExpectBytes
	ExpectEnd // the terminal LF
)

var categoryNames = [...]string{"nothing", "literal", "case", "bool", "integer", "string", "bytes", "end"}

func (c Category) String() string { return categoryNames[c] }

// Expected is what the grammar expects next and, for a field's value, which field.
type Expected struct {
	Next  Category
	Field *interaction.Field
}

// Expected returns what the grammar expects next.
func (d *Decoder) Expected() Expected {
	if d.terminal || d.m.done {
		return Expected{}
	}
	o := d.m.cur
	e := Expected{Field: o.field}
	switch o.kind {
	case opLit:
		e.Next = ExpectLiteral
	case opCase:
		e.Next = ExpectCase
	case opBool:
		e.Next = ExpectBool
	case opInt:
		e.Next = ExpectInteger
	case opStr:
		e.Next = ExpectString
	case opBytes:
		e.Next = ExpectBytes
	case opEnd:
		e.Next = ExpectEnd
	}
	return e
}
