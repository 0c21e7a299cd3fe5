package interaction

import (
	"strconv"
	"strings"

	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// walker reads a parsed JSON tree as a value of a type, depth-first in declaration order, in
// one of two dialects. The strict dialect is step 5 of Decode: a value document's exact
// representation, every member read as its last occurrence. The provider dialect reads text
// a provider wrote (see ReadProvider): integers may be JSON numbers and "-0", members come in
// any order (noted), and each refusal says what was not repaired. Both refuse the same
// missing, undeclared and out-of-bound values; only the spellings they admit differ.
type walker struct {
	provider bool
	applied  applied
	// path is the JSON path to the value being read, kept as segments and rendered only for
	// a refusal, so an admitted text costs no path strings.
	path []pathSeg
	// values and fieldValues are slabs the read value's parts are cut from, so a document
	// costs a few allocations rather than two per value object.
	values      []Value
	fieldValues []FieldValue
}

func (w *walker) newValue(t *Type) *Value {
	if len(w.values) == cap(w.values) {
		w.values = make([]Value, 0, 4)
	}
	w.values = append(w.values, Value{typ: t})
	return &w.values[len(w.values)-1]
}

func (w *walker) newFields(n int) []FieldValue {
	if n == 0 {
		return []FieldValue{} // what the single pass gives, so both paths decode equal values
	}
	if len(w.fieldValues)+n > cap(w.fieldValues) {
		w.fieldValues = make([]FieldValue, 0, max(n, 16))
	}
	w.fieldValues = w.fieldValues[:len(w.fieldValues)+n]
	return w.fieldValues[len(w.fieldValues)-n : len(w.fieldValues) : len(w.fieldValues)]
}

// pathSeg is ".name" literally, or a member selector ["id"] when member is set.
type pathSeg struct {
	text   string
	member bool
}

func (w *walker) push(seg string)   { w.path = append(w.path, pathSeg{text: seg}) }
func (w *walker) member(key string) { w.path = append(w.path, pathSeg{text: key, member: true}) }
func (w *walker) pop()              { w.path = w.path[:len(w.path)-1] }

// fail builds a Z206 refusal at the current path.
func (w *walker) fail(rule Rule, format string, args ...any) *Error {
	var b strings.Builder
	b.WriteString("$")
	for _, seg := range w.path {
		if seg.member {
			b.WriteString(canonjson.MemberPath(seg.text))
		} else {
			b.WriteString(seg.text)
		}
	}
	return decodeErr(CodeNotAdmitted, rule, b.String(), format, args...)
}

// unrepaired is the provider dialect's reminder of what a refusal did not do.
func (w *walker) unrepaired(what string) string {
	if w.provider {
		return "; " + what
	}
	return ""
}

// wrongKind refuses a JSON value of the wrong type. The strict dialect states the
// representation's rule; the provider dialect names what it wants and gives null its own
// rule, because a null is where a fabricated default would otherwise go.
func (w *walker) wrongKind(n *jsontext.Node, want, strict string, args ...any) *Error {
	switch {
	case !w.provider:
		return w.fail(RuleRepresentation, strict, args...)
	case n.Kind == jsontext.Null:
		return w.fail(RuleNull, "null where %s is required; nothing is filled in", want)
	}
	return w.fail(RuleRepresentation, "%s where %s is required", n.Kind, want)
}

var (
	recordMembers  = []string{"fields"}
	variantMembers = []string{"case", "fields"}
)

func (w *walker) value(t *Type, n *jsontext.Node) (*Value, error) {
	if n.Kind != jsontext.Object {
		return nil, w.wrongKind(n, "a "+t.kind.String()+" value object", "a %s value of %s must be an object", t.kind, canonjson.Quote(t.id, 128))
	}
	allowed := recordMembers
	if t.kind == Variant {
		allowed = variantMembers
	}
	if err := w.members(t, n, allowed); err != nil {
		return nil, err
	}
	v := w.newValue(t)
	list := &t.fields
	if t.kind == Variant {
		c, err := w.variantCase(t, n.Last("case"))
		if err != nil {
			return nil, err
		}
		v.cas, list = c, &c.fields
	}
	fields := n.Last("fields")
	if fields == nil && w.provider {
		return nil, w.fail(RuleRepresentation, "a %s value needs a fields object", t.kind)
	}
	w.push(".fields")
	defer w.pop()
	if fields == nil || fields.Kind != jsontext.Object {
		return nil, w.wrongKind(fields, "a fields object", "a %s value needs a fields object", t.kind)
	}
	var err error
	v.fields, err = w.fields(list, fields)
	return v, err
}

// members refuses members other than the allowed ones and notes an order other than theirs.
func (w *walker) members(t *Type, n *jsontext.Node, allowed []string) error {
	for i, m := range n.Members {
		j := indexOf(allowed, m.Key)
		if j < 0 {
			w.member(m.Key)
			defer w.pop()
			if w.provider {
				return w.fail(RuleRepresentation, "a value object has no member %s", canonjson.Quote(m.Key, 64))
			}
			return w.fail(RuleRepresentation, "a %s value has no member %s", t.kind, canonjson.Quote(m.Key, 64))
		}
		if j != i {
			w.applied.note(AppliedKeyOrder)
		}
	}
	return nil
}

func (w *walker) variantCase(t *Type, n *jsontext.Node) (*Case, error) {
	w.push(".case")
	defer w.pop()
	switch {
	case n == nil:
		return nil, w.fail(RuleCase, "a variant value of %s needs a case", canonjson.Quote(t.id, 128))
	case w.provider && n.Kind == jsontext.Null:
		return nil, w.fail(RuleNull, "the case is null; a variant value always has exactly one case")
	case n.Kind != jsontext.String && w.provider:
		return nil, w.fail(RuleCase, "the case must be a string naming a case, not %s", n.Kind)
	case n.Kind != jsontext.String:
		return nil, w.fail(RuleCase, "the case must be a string naming one of the variant's cases")
	}
	c, ok := t.caseBy[n.Text]
	if !ok {
		return nil, w.fail(RuleCase, "%s is not a case of %s", canonjson.Quote(n.Text, 64), canonjson.Quote(t.id, 128))
	}
	return c, nil
}

// fields reads a fields object: undeclared members first (in document order), then each
// declared field in declaration order, the last occurrence of a member deciding.
func (w *walker) fields(list *fieldList, n *jsontext.Node) ([]FieldValue, error) {
	var small [16]*jsontext.Node
	byIndex := small[:0]
	if len(list.list) > len(small) {
		byIndex = make([]*jsontext.Node, len(list.list))
	}
	byIndex = byIndex[:len(list.list)]
	for i, m := range n.Members {
		f, ok := list.ids[m.Key]
		if !ok {
			w.member(m.Key)
			return nil, w.fail(RuleFieldsUnknown, "undeclared field %s%s", canonjson.Quote(m.Key, 64), w.unrepaired("nothing is dropped"))
		}
		if f.index != i {
			w.applied.note(AppliedKeyOrder)
		}
		byIndex[f.index] = m.Value
	}
	out := w.newFields(len(list.list))
	for i, f := range list.list {
		w.member(f.id)
		if byIndex[i] == nil {
			return nil, w.fail(RuleFieldsMissing, "missing field %s%s", canonjson.Quote(f.id, 128), w.unrepaired("nothing is filled in"))
		}
		var err error
		if out[i], err = w.leaf(f, byIndex[i]); err != nil {
			return nil, err
		}
		w.pop()
	}
	return out, nil
}

func (w *walker) leaf(f *Field, n *jsontext.Node) (FieldValue, error) {
	fv := FieldValue{field: f}
	switch {
	case f.rep == Bool:
		if n.Kind != jsontext.True && n.Kind != jsontext.False {
			return fv, w.wrongKind(n, "true or false", "a bool is true or false")
		}
		if n.Kind == jsontext.True {
			fv.bits = 1
		}
	case f.rep.IsInteger():
		v, err := w.integer(f, n)
		fv.bits = integerBits(v)
		return fv, err
	case f.rep == String:
		if n.Kind != jsontext.String {
			return fv, w.wrongKind(n, "a string", "a string field needs a JSON string")
		}
		if len(n.Text) > f.maxBytes {
			return fv, w.fail(RuleStringBytes, "the string is %d UTF-8 bytes; at most %d are admitted", len(n.Text), f.maxBytes)
		}
		fv.text = n.Text
	case f.rep == Bytes:
		var err error
		fv.text, err = w.bytes(f, n)
		return fv, err
	default:
		var err error
		fv.value, err = w.value(f.nested, n)
		return fv, err
	}
	return fv, nil
}

// integer reads an integer from its token text, never through float64: in the strict dialect
// a canonical decimal string; in the provider dialect also a JSON number, and "-0".
func (w *walker) integer(f *Field, n *jsontext.Node) (Int, error) {
	text := n.Text
	if w.provider {
		var err error
		if text, err = w.providerInteger(n); err != nil {
			return Int{}, err
		}
	} else if n.Kind != jsontext.String {
		return Int{}, w.fail(RuleRepresentation, "an integer (%s) travels as a decimal string, not as JSON %s", f.rep, n.Kind)
	}
	v, syntax, fits := parseDecimal(text)
	if !syntax {
		return Int{}, w.fail(RuleRepresentation, "%s is not a canonical decimal integer", canonjson.Quote(text, 64))
	}
	if !fits || v.Cmp(f.min) < 0 || v.Cmp(f.max) > 0 {
		return Int{}, w.fail(RuleIntegerRange, "%s is outside [%s, %s]%s", canonjson.Quote(n.Text, 64), f.min, f.max, w.unrepaired("it is never clamped"))
	}
	return v, nil
}

// providerInteger returns the decimal text of an integer written as a JSON number or a
// decimal string, refusing a fraction or an exponent (never rounded) and reading "-0" as 0.
func (w *walker) providerInteger(n *jsontext.Node) (string, error) {
	text := n.Text
	switch {
	case n.Kind == jsontext.Number && n.Frac:
		return "", w.fail(RuleIntegerFraction, "%s has a fraction; an integer is never rounded", canonjson.Quote(text, 64))
	case n.Kind == jsontext.Number && n.Exp:
		return "", w.fail(RuleIntegerExponent, "%s has an exponent; write the integer's digits", canonjson.Quote(text, 64))
	case n.Kind == jsontext.Number:
		w.applied.note(AppliedIntegerNumber)
	case n.Kind == jsontext.String:
		if err := w.decimalString(text); err != nil {
			return "", err
		}
	default:
		return "", w.wrongKind(n, "an integer (a JSON number or a decimal string)", "")
	}
	if text == "-0" {
		w.applied.note(AppliedNegativeZero)
		return "0", nil
	}
	return text, nil
}

// decimalString checks a string against the JSON integer grammar -?(0|[1-9][0-9]*).
func (w *walker) decimalString(s string) error {
	switch {
	case canonicalDigits(strings.TrimPrefix(s, "-")):
		return nil
	case strings.ContainsRune(s, '.'):
		return w.fail(RuleIntegerFraction, "%s has a fraction; an integer is never rounded", canonjson.Quote(s, 64))
	case strings.ContainsAny(s, "eE") && jsontext.IsNumber(s):
		return w.fail(RuleIntegerExponent, "%s has an exponent; write the integer's digits", canonjson.Quote(s, 64))
	}
	return w.fail(RuleIntegerSyntax, "%s is not a decimal integer", canonjson.Quote(s, 64))
}

// bytes reads an array of integers 0..255 written as JSON numbers. The JSON grammar already
// excludes leading zeros and '+', so a number token that parses as a uint8 is canonical.
func (w *walker) bytes(f *Field, n *jsontext.Node) (string, error) {
	if n.Kind != jsontext.Array {
		return "", w.wrongKind(n, "an array of integers 0..255", "a bytes field is an array of integers 0..255")
	}
	if len(n.Elems) > f.maxBytes {
		return "", w.fail(RuleBytesLength, "%d elements; at most %d are admitted", len(n.Elems), f.maxBytes)
	}
	b := make([]byte, len(n.Elems))
	for i, e := range n.Elems {
		x, err := strconv.ParseUint(e.Text, 10, 8)
		if e.Kind != jsontext.Number || e.Frac || e.Exp || err != nil {
			w.push("[" + strconv.Itoa(i) + "]")
			return "", w.byteElementErr(e)
		}
		b[i] = byte(x)
	}
	return string(b), nil
}

func (w *walker) byteElementErr(e *jsontext.Node) *Error {
	if w.provider {
		return w.fail(RuleBytesElement, "a byte is an integer 0..255 written as a JSON number")
	}
	if x, err := strconv.Atoi(e.Text); err == nil && e.Kind == jsontext.Number && len(e.Text) <= 3 && x > 255 {
		return w.fail(RuleBytesElement, "a byte is an integer 0..255; got %d", x)
	}
	return w.fail(RuleBytesElement, "a byte is an integer 0..255")
}

// integerBits stores an in-range integer in FieldValue.bits.
func integerBits(v Int) uint64 {
	if i, ok := v.Int64(); ok && v.neg {
		return uint64(i)
	}
	return v.abs
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}
