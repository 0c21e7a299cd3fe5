package interaction

import (
	"strconv"

	"github.com/beamagents/beamagents/interaction/internal/jsontree"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// maxValueNesting is the deepest container nesting inside "value" that a value of any
// admitted schema can have: two containers (value object, fields object) per type level plus
// one bytes array.
const maxValueNesting = 2*MaxDepth + 1

// reference runs steps 3 to 6 literally on a generic, order- and duplicate-preserving parse.
// Decode reaches it only when the single-pass recognizer did not admit the document, so
// every diagnostic comes from here.
func (s *Schema) reference(text string) (*Value, error) {
	if err := lineEnding(text); err != nil {
		return nil, err
	}
	root, err := jsontree.Parse([]byte(text[:len(text)-1]))
	if err != nil {
		se := err.(*jsontree.SyntaxError)
		return nil, decodeErr(CodeZ205, RuleJSON, "$", "invalid JSON at byte %d: %s", se.Offset, se.Reason)
	}
	valueNode, err := s.envelope(root)
	if err != nil {
		return nil, err
	}
	if nesting(valueNode) > maxValueNesting {
		return nil, decodeErr(CodeZ206, RuleMaxDepth, "$.value", "the value nests containers deeper than %d levels (%d type levels)", maxValueNesting, MaxDepth)
	}
	v, err := walkValue(s.root, valueNode, "$.value")
	if err != nil {
		return nil, err
	}
	v.doc = string(appendDocument(nil, s, v))
	if v.doc != text {
		return nil, decodeErr(CodeZ205, RuleCanonical, "$", "the document is not the canonical rendering of its value (first difference at byte %d)", firstDifference(v.doc, text))
	}
	return v, nil
}

var envelopeMembers = [...]string{"schema", "root_type_id", "schema_digest", "value"}

// envelope checks step 4 and returns the value node.
func (s *Schema) envelope(root *jsontree.Node) (*jsontree.Node, error) {
	if root.Kind != jsontree.Object {
		return nil, decodeErr(CodeZ205, RuleEnvelope, "$", "the document must be an object with the members schema, root_type_id, schema_digest and value")
	}
	for _, m := range root.Members {
		if !isEnvelopeMember(m.Key) {
			return nil, decodeErr(CodeZ205, RuleEnvelope, "$"+memberPath(m.Key), "unknown envelope member %s", canonjson.Quote(m.Key, 64))
		}
	}
	for _, name := range envelopeMembers {
		n := root.Last(name)
		if n == nil {
			return nil, decodeErr(CodeZ205, RuleEnvelope, "$", "missing envelope member %q", name)
		}
		if name != "value" && n.Kind != jsontree.String {
			return nil, decodeErr(CodeZ205, RuleEnvelope, "$."+name, "%s must be a string", name)
		}
	}
	for _, b := range [...]struct {
		name, want string
		rule       Rule
	}{{"schema", ValueFormat, RuleEnvelopeSchema}, {"root_type_id", s.root.id, RuleEnvelopeRootTypeID}, {"schema_digest", s.digest, RuleEnvelopeSchemaDigest}} {
		if got := root.Last(b.name).Text; got != b.want {
			return nil, decodeErr(CodeZ206, b.rule, "$."+b.name, "%s is %s; this schema requires %s", b.name, canonjson.Quote(got, 96), canonjson.Quote(b.want, 96))
		}
	}
	return root.Last("value"), nil
}

func isEnvelopeMember(k string) bool {
	for _, m := range envelopeMembers {
		if k == m {
			return true
		}
	}
	return false
}

// nesting returns the container depth of n (0 for a scalar), iteratively.
func nesting(n *jsontree.Node) int {
	type item struct {
		n *jsontree.Node
		d int
	}
	deepest, stack := 0, []item{{n, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.n.Kind != jsontree.Object && it.n.Kind != jsontree.Array {
			continue
		}
		deepest = max(deepest, it.d)
		for _, m := range it.n.Members {
			stack = append(stack, item{m.Value, it.d + 1})
		}
		for _, e := range it.n.Elems {
			stack = append(stack, item{e, it.d + 1})
		}
	}
	return deepest
}

// memberPath renders a member selector for a stable id or an untrusted key.
func memberPath(key string) string { return "[" + canonjson.Quote(key, 64) + "]" }

func walkValue(t *Type, n *jsontree.Node, path string) (*Value, error) {
	if n.Kind != jsontree.Object {
		return nil, decodeErr(CodeZ206, RuleRepresentation, path, "a %s value of %s must be an object", t.kind, canonjson.Quote(t.id, 128))
	}
	allowed := "fields"
	if t.kind == Variant {
		allowed = "case"
	}
	for _, m := range n.Members {
		if m.Key != "fields" && m.Key != allowed {
			return nil, decodeErr(CodeZ206, RuleRepresentation, path+memberPath(m.Key), "a %s value has no member %s", t.kind, canonjson.Quote(m.Key, 64))
		}
	}
	v := &Value{typ: t}
	list := &t.fields
	if t.kind == Variant {
		c, err := walkCase(t, n.Last("case"), path+".case")
		if err != nil {
			return nil, err
		}
		v.cas, list = c, &c.fields
	}
	fields := n.Last("fields")
	if fields == nil || fields.Kind != jsontree.Object {
		return nil, decodeErr(CodeZ206, RuleRepresentation, path+".fields", "a %s value needs a fields object", t.kind)
	}
	var err error
	v.fields, err = walkFields(list, fields, path+".fields")
	return v, err
}

func walkCase(t *Type, n *jsontree.Node, path string) (*Case, error) {
	if n == nil {
		return nil, decodeErr(CodeZ206, RuleCase, path, "a variant value of %s needs a case", canonjson.Quote(t.id, 128))
	}
	if n.Kind != jsontree.String {
		return nil, decodeErr(CodeZ206, RuleCase, path, "the case must be a string naming one of the variant's cases")
	}
	c, ok := t.caseBy[n.Text]
	if !ok {
		return nil, decodeErr(CodeZ206, RuleCase, path, "%s is not a case of %s", canonjson.Quote(n.Text, 64), canonjson.Quote(t.id, 128))
	}
	return c, nil
}

func walkFields(list *fieldList, n *jsontree.Node, path string) ([]FieldValue, error) {
	for _, m := range n.Members {
		if _, ok := list.ids[m.Key]; !ok {
			return nil, decodeErr(CodeZ206, RuleFieldsUnknown, path+memberPath(m.Key), "undeclared field %s", canonjson.Quote(m.Key, 64))
		}
	}
	out := make([]FieldValue, len(list.list))
	for i, f := range list.list {
		fpath := path + memberPath(f.id)
		m := n.Last(f.id)
		if m == nil {
			return nil, decodeErr(CodeZ206, RuleFieldsMissing, fpath, "missing field %s", canonjson.Quote(f.id, 128))
		}
		fv, err := walkLeaf(f, m, fpath)
		if err != nil {
			return nil, err
		}
		out[i] = fv
	}
	return out, nil
}

func walkLeaf(f *Field, n *jsontree.Node, path string) (FieldValue, error) {
	fv := FieldValue{field: f}
	switch {
	case f.rep == Bool:
		if n.Kind != jsontree.True && n.Kind != jsontree.False {
			return fv, decodeErr(CodeZ206, RuleRepresentation, path, "a bool is true or false")
		}
		if n.Kind == jsontree.True {
			fv.bits = 1
		}
	case f.rep.IsInteger():
		return walkInteger(f, n, path)
	case f.rep == String:
		if n.Kind != jsontree.String {
			return fv, decodeErr(CodeZ206, RuleRepresentation, path, "a string field needs a JSON string")
		}
		if len(n.Text) > f.maxBytes {
			return fv, decodeErr(CodeZ206, RuleStringBytes, path, "the string is %d UTF-8 bytes; at most %d are admitted", len(n.Text), f.maxBytes)
		}
		fv.text = n.Text
	case f.rep == Bytes:
		return walkBytes(f, n, path)
	default:
		v, err := walkValue(f.nested, n, path)
		fv.value = v
		return fv, err
	}
	return fv, nil
}

func walkInteger(f *Field, n *jsontree.Node, path string) (FieldValue, error) {
	fv := FieldValue{field: f}
	if n.Kind != jsontree.String {
		return fv, decodeErr(CodeZ206, RuleRepresentation, path, "an integer (%s) travels as a decimal string, not as JSON %s", f.rep, kindName(n.Kind))
	}
	v, syntax, fits := parseDecimal(n.Text)
	if !syntax {
		return fv, decodeErr(CodeZ206, RuleRepresentation, path, "%s is not a canonical decimal integer", canonjson.Quote(n.Text, 64))
	}
	if !fits || v.Cmp(f.min) < 0 || v.Cmp(f.max) > 0 {
		return fv, decodeErr(CodeZ206, RuleIntegerRange, path, "%s is outside [%s, %s]", canonjson.Quote(n.Text, 64), f.min, f.max)
	}
	fv.bits = integerBits(v)
	return fv, nil
}

// parseDecimal splits canonical syntax from range: syntax reports the canonical form,
// fits whether the value lies within [math.MinInt64, math.MaxUint64].
func parseDecimal(s string) (v Int, syntax, fits bool) {
	neg := len(s) > 0 && s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if !canonicalDigits(digits) || neg && digits == "0" {
		return Int{}, false, false
	}
	abs, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || neg && abs > 1<<63 {
		return Int{}, true, false
	}
	return Int{neg: neg, abs: abs}, true, true
}

// integerBits stores an in-range integer in FieldValue.bits.
func integerBits(v Int) uint64 {
	if i, ok := v.Int64(); ok && v.neg {
		return uint64(i)
	}
	return v.abs
}

func walkBytes(f *Field, n *jsontree.Node, path string) (FieldValue, error) {
	fv := FieldValue{field: f}
	if n.Kind != jsontree.Array {
		return fv, decodeErr(CodeZ206, RuleRepresentation, path, "a bytes field is an array of integers 0..255")
	}
	if len(n.Elems) > f.maxBytes {
		return fv, decodeErr(CodeZ206, RuleBytesLength, path, "%d elements; at most %d are admitted", len(n.Elems), f.maxBytes)
	}
	b := make([]byte, len(n.Elems))
	for i, e := range n.Elems {
		if e.Kind != jsontree.Number || !canonicalDigits(e.Text) || len(e.Text) > 3 {
			return fv, decodeErr(CodeZ206, RuleBytesElement, path+"["+strconv.Itoa(i)+"]", "a byte is an integer 0..255")
		}
		x, _ := strconv.Atoi(e.Text)
		if x > 255 {
			return fv, decodeErr(CodeZ206, RuleBytesElement, path+"["+strconv.Itoa(i)+"]", "a byte is an integer 0..255; got %d", x)
		}
		b[i] = byte(x)
	}
	fv.text = string(b)
	return fv, nil
}

func kindName(k jsontree.Kind) string {
	return [...]string{"null", "false", "true", "number", "string", "array", "object"}[k]
}
