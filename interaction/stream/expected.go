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

// NextValue returns what the grammar expects of the value that comes next. It is Expected,
// except where all that remains of the literal in progress is the opening quote of a string
// or an integer field's value (the canonical document writes that quote with the key before
// it): then it is that field's string or integer. A transducer in front of the decoder reads
// it to tell how a value it holds must be written before writing its first byte.
func (d *Decoder) NextValue() Expected {
	if d.terminal || d.m.done {
		return Expected{}
	}
	d.sync()
	m := &d.m
	if o := m.cur; o.kind == opLit && m.pos == len(o.lit)-1 && o.lit[m.pos] == '"' {
		f := m.top()
		if pc := f.pc + 1; pc < len(f.ops) && f.ops[pc].start != 0 {
			switch next := &f.ops[pc]; next.kind {
			case opStr:
				return Expected{Next: ExpectString, Field: next.field}
			case opInt:
				return Expected{Next: ExpectInteger, Field: next.field}
			}
		}
	}
	return d.Expected()
}
