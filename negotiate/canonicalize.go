package negotiate

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// MaxInputBytes bounds provider text: whitespace and number tokens may make it longer than
// its canonical document (at most interaction.MaxDocumentBytes), but not without limit.
const MaxInputBytes = 4 * interaction.MaxDocumentBytes

// Canonicalizations a provider's text may need, as they appear in Canonical.Applied and in a
// receipt's transformations. None of them changes a value.
const (
	AppliedEnvelope      = "envelope"       // the envelope was absent; the schema's own was added
	AppliedFinalLF       = "final_lf"       // the terminal LF was absent
	AppliedWhitespace    = "whitespace"     // insignificant whitespace was removed
	AppliedKeyOrder      = "key_order"      // members were put in declaration order
	AppliedIntegerNumber = "integer_number" // integers written as JSON numbers became decimal strings
	AppliedNegativeZero  = "negative_zero"  // an integer written "-0" became "0"
	AppliedStringEscape  = "string_escape"  // strings or keys were re-escaped canonically
)

// Canonical is provider text made into the canonical value document of a schema.
type Canonical struct {
	// Value is the value the strict decoder admitted from Document.
	Value *interaction.Value
	// Document is the canonical value document, terminal LF included.
	Document []byte
	// Applied lists the canonicalizations the text needed, sorted; empty when the text was
	// already the canonical document.
	Applied []string
}

// Canonicalize reads the JSON text a provider returned under s's provider projection and
// returns the canonical value document of the same value, or refuses with ErrCanonicalize.
//
// Admitted beyond the canonical form: insignificant whitespace, members in any order, the
// value without its envelope (the envelope, if present, must name exactly this schema), no
// terminal LF, any valid string escaping, and integers written as JSON number tokens or as
// decimal strings ("-0" reads as 0). Refused, never repaired: invalid JSON or UTF-8, a
// duplicate key anywhere, null, a missing or undeclared field or member (nothing is filled
// in, nothing dropped), an integer with a fraction or an exponent (even 1.0 or 1e0) or outside
// its bounds (never rounded or clamped), a string or bytes over its bound (never cut), and any
// JSON type the field's representation does not take. Integers are read from their token
// text, never through float64. The result is then admitted by s's strict decoder.
func Canonicalize(s *interaction.Schema, text []byte) (*Canonical, error) {
	if s == nil {
		return nil, invalid(RuleSchemaNil, "Canonicalize needs a schema")
	}
	if len(text) > MaxInputBytes {
		return nil, newErr(CodeCanonicalize, RuleInputBytes, "$", "the text is longer than %d bytes", MaxInputBytes)
	}
	if !utf8.Valid(text) {
		return nil, newErr(CodeCanonicalize, RuleUTF8, "$", "the text is not UTF-8")
	}
	c := &canonicalizer{s: s, out: make([]byte, 0, len(text)+len(s.Digest())+128)}
	body := string(text)
	if strings.HasSuffix(body, "\n") {
		body = body[:len(body)-1]
	} else {
		c.note(AppliedFinalLF)
	}
	root, p, serr := parseJSON(body)
	if serr != nil {
		return nil, newErr(CodeCanonicalize, serr.rule, "$", "at byte %d: %s", serr.off, serr.reason)
	}
	if p.spaced {
		c.note(AppliedWhitespace)
	}
	if p.escaped {
		c.note(AppliedStringEscape)
	}
	if err := c.document(root); err != nil {
		return nil, err
	}
	return c.admit()
}

type canonicalizer struct {
	s       *interaction.Schema
	out     []byte
	applied uint8 // bit i: canonicalizationNames[i]
	// path is the JSON path to the value being read, kept as segments and rendered only for
	// a refusal, so an admitted text costs no path strings.
	path []pathSeg
}

// pathSeg is ".name" literally, or a member selector ["id"] when member is set.
type pathSeg struct {
	text   string
	member bool
}

// canonicalizationNames in sorted order, so Applied is sorted by construction.
var canonicalizationNames = [...]string{AppliedEnvelope, AppliedFinalLF, AppliedIntegerNumber, AppliedKeyOrder, AppliedNegativeZero, AppliedStringEscape, AppliedWhitespace}

func (c *canonicalizer) note(name string) {
	for i, n := range canonicalizationNames {
		if n == name {
			c.applied |= 1 << i
		}
	}
}

func (c *canonicalizer) appliedNames() []string {
	var out []string
	for i, n := range canonicalizationNames {
		if c.applied&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// fail builds a refusal at the current path.
func (c *canonicalizer) fail(rule Rule, format string, args ...any) *Error {
	var b strings.Builder
	b.WriteString("$")
	for _, seg := range c.path {
		if seg.member {
			b.WriteString(memberPath("", seg.text))
		} else {
			b.WriteString(seg.text)
		}
	}
	return newErr(CodeCanonicalize, rule, b.String(), format, args...)
}

func (c *canonicalizer) push(seg string)   { c.path = append(c.path, pathSeg{text: seg}) }
func (c *canonicalizer) member(key string) { c.path = append(c.path, pathSeg{text: key, member: true}) }
func (c *canonicalizer) pop()              { c.path = c.path[:len(c.path)-1] }

func (c *canonicalizer) admit() (*Canonical, error) {
	c.out = append(c.out, '}', '\n')
	if len(c.out) > interaction.MaxDocumentBytes {
		return nil, c.fail(RuleDocumentBytes, "the canonical document would be %d bytes; at most %d are admitted", len(c.out), interaction.MaxDocumentBytes)
	}
	v, err := c.s.Decode(c.out)
	if err != nil {
		return nil, &Error{Code: CodeCanonicalize, Rule: RuleCanonicalDecoder, Path: "$", Message: "the strict decoder refused the canonical document", Err: err}
	}
	return &Canonical{Value: v, Document: c.out, Applied: c.appliedNames()}, nil
}

var envelopeOrder = [...]string{"schema", "root_type_id", "schema_digest", "value"}

// document renders the envelope and the value of the top-level node.
func (c *canonicalizer) document(n *jnode) error {
	if n.kind != jObject {
		return c.fail(RuleRepresentation, "the text must be a JSON object, not %s", n.kind)
	}
	value := n
	if field(n, "value") != nil {
		var err error
		if value, err = c.envelope(n); err != nil {
			return err
		}
	} else {
		c.note(AppliedEnvelope)
	}
	c.out = appendEnvelope(c.out, c.s)
	c.push(".value")
	defer c.pop()
	return c.value(c.s.Root(), value)
}

// envelope checks a present envelope: exactly its four members, naming exactly this schema.
func (c *canonicalizer) envelope(n *jnode) (*jnode, error) {
	want := map[string]string{"schema": interaction.ValueFormat, "root_type_id": c.s.RootTypeID(), "schema_digest": c.s.Digest()}
	for i, m := range n.members {
		if i >= len(envelopeOrder) || m.key != envelopeOrder[i] {
			c.note(AppliedKeyOrder)
		}
		w, declared := want[m.key]
		switch {
		case m.key == "value":
		case !declared:
			return nil, c.fail(RuleEnvelope, "unknown envelope member %s", canonjson.Quote(m.key, 64))
		case m.value.kind != jString || m.value.text != w:
			return nil, c.fail(RuleEnvelope, "%s must be %s", m.key, canonjson.Quote(w, 96))
		}
	}
	if len(n.members) != len(envelopeOrder) {
		return nil, c.fail(RuleEnvelope, "an envelope has exactly the members schema, root_type_id, schema_digest and value")
	}
	return field(n, "value"), nil
}

// fieldSet is a record type or a variant case: what holds fields.
type fieldSet interface {
	NumFields() int
	Field(i int) *interaction.Field
	FieldByID(id string) (*interaction.Field, bool)
}

func (c *canonicalizer) value(t *interaction.Type, n *jnode) error {
	if n.kind != jObject {
		return c.wrongKind(n, "a "+t.Kind().String()+" value object")
	}
	var fs fieldSet = t
	c.out = append(c.out, '{')
	if t.Kind() == interaction.Variant {
		cs, err := c.variantCase(t, n)
		if err != nil {
			return err
		}
		fs = cs
		c.out = append(c.out, `"case":`...)
		c.out = canonjson.AppendString(c.out, cs.StableID())
		c.out = append(c.out, ',')
	} else if err := c.members(n, "fields"); err != nil {
		return err
	}
	fields := field(n, "fields")
	if fields == nil {
		return c.fail(RuleRepresentation, "a %s value needs a fields object", t.Kind())
	}
	c.out = append(c.out, `"fields":`...)
	c.push(".fields")
	if err := c.fields(fs, fields); err != nil {
		return err
	}
	c.pop()
	c.out = append(c.out, '}')
	return nil
}

func (c *canonicalizer) variantCase(t *interaction.Type, n *jnode) (*interaction.Case, error) {
	if err := c.members(n, "case", "fields"); err != nil {
		return nil, err
	}
	cn := field(n, "case")
	c.push(".case")
	defer c.pop()
	switch {
	case cn == nil:
		return nil, c.fail(RuleCase, "a variant value of %s needs a case", canonjson.Quote(t.StableID(), 128))
	case cn.kind == jNull:
		return nil, c.fail(RuleNull, "the case is null; a variant value always has exactly one case")
	case cn.kind != jString:
		return nil, c.fail(RuleCase, "the case must be a string naming a case, not %s", cn.kind)
	}
	cs, ok := t.CaseByID(cn.text)
	if !ok {
		return nil, c.fail(RuleCase, "%s is not a case of %s", canonjson.Quote(cn.text, 64), canonjson.Quote(t.StableID(), 128))
	}
	return cs, nil
}

// members refuses members other than the allowed ones and notes an order other than theirs.
func (c *canonicalizer) members(n *jnode, allowed ...string) error {
	for i, m := range n.members {
		j := indexOf(allowed, m.key)
		if j < 0 {
			c.member(m.key)
			defer c.pop()
			return c.fail(RuleRepresentation, "a value object has no member %s", canonjson.Quote(m.key, 64))
		}
		if j != i {
			c.note(AppliedKeyOrder)
		}
	}
	return nil
}

func (c *canonicalizer) fields(fs fieldSet, n *jnode) error {
	if n.kind != jObject {
		return c.wrongKind(n, "a fields object")
	}
	byIndex := make([]*jnode, fs.NumFields())
	for i, m := range n.members {
		f, ok := fs.FieldByID(m.key)
		if !ok {
			c.member(m.key)
			return c.fail(RuleFieldsUnknown, "undeclared field %s; nothing is dropped", canonjson.Quote(m.key, 64))
		}
		if f.Index() != i {
			c.note(AppliedKeyOrder)
		}
		byIndex[f.Index()] = m.value
	}
	c.out = append(c.out, '{')
	for i, v := range byIndex {
		f := fs.Field(i)
		c.member(f.StableID())
		if v == nil {
			return c.fail(RuleFieldsMissing, "missing field %s; nothing is filled in", canonjson.Quote(f.StableID(), 128))
		}
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = canonjson.AppendString(c.out, f.StableID())
		c.out = append(c.out, ':')
		if err := c.leaf(f, v); err != nil {
			return err
		}
		c.pop()
	}
	c.out = append(c.out, '}')
	return nil
}

func (c *canonicalizer) leaf(f *interaction.Field, n *jnode) error {
	switch r := f.Representation(); {
	case r == interaction.Bool:
		if n.kind != jTrue && n.kind != jFalse {
			return c.wrongKind(n, "true or false")
		}
		c.out = strconv.AppendBool(c.out, n.kind == jTrue)
	case r.IsInteger():
		return c.integer(f, n)
	case r == interaction.String:
		if n.kind != jString {
			return c.wrongKind(n, "a string")
		}
		if len(n.text) > f.MaxBytes() {
			return c.fail(RuleStringBytes, "the string is %d UTF-8 bytes; at most %d are admitted", len(n.text), f.MaxBytes())
		}
		c.out = canonjson.AppendString(c.out, n.text)
	case r == interaction.Bytes:
		return c.bytes(f, n)
	default:
		return c.value(f.Nested(), n)
	}
	return nil
}

// integer reads an integer from its token text: a JSON number or a decimal string.
func (c *canonicalizer) integer(f *interaction.Field, n *jnode) error {
	text := n.text
	switch {
	case n.kind == jNumber && n.frac:
		return c.fail(RuleIntegerFraction, "%s has a fraction; an integer is never rounded", canonjson.Quote(text, 64))
	case n.kind == jNumber && n.exp:
		return c.fail(RuleIntegerExponent, "%s has an exponent; write the integer's digits", canonjson.Quote(text, 64))
	case n.kind == jNumber:
		c.note(AppliedIntegerNumber)
	case n.kind == jString:
		if err := c.decimalString(text); err != nil {
			return err
		}
	default:
		return c.wrongKind(n, "an integer (a JSON number or a decimal string)")
	}
	if text == "-0" {
		text = "0"
		c.note(AppliedNegativeZero)
	}
	v, ok := interaction.ParseInt(text)
	lo, hi := f.Range()
	if !ok || v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
		return c.fail(RuleIntegerRange, "%s is outside [%s, %s]; it is never clamped", canonjson.Quote(n.text, 64), lo, hi)
	}
	c.out = append(c.out, '"')
	c.out = append(c.out, text...)
	c.out = append(c.out, '"')
	return nil
}

// decimalString checks a string against the JSON integer grammar -?(0|[1-9][0-9]*).
func (c *canonicalizer) decimalString(s string) error {
	digits := strings.TrimPrefix(s, "-")
	ok := digits != "" && (digits == "0" || digits[0] != '0')
	for i := 0; ok && i < len(digits); i++ {
		ok = digits[i] >= '0' && digits[i] <= '9'
	}
	switch {
	case ok:
		return nil
	case strings.ContainsRune(s, '.'):
		return c.fail(RuleIntegerFraction, "%s has a fraction; an integer is never rounded", canonjson.Quote(s, 64))
	case strings.ContainsAny(s, "eE") && isNumberToken(s):
		return c.fail(RuleIntegerExponent, "%s has an exponent; write the integer's digits", canonjson.Quote(s, 64))
	}
	return c.fail(RuleIntegerSyntax, "%s is not a decimal integer", canonjson.Quote(s, 64))
}

// isNumberToken reports whether s is a JSON number token.
func isNumberToken(s string) bool {
	p := &parser{s: s}
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return false
	}
	_, err := p.number()
	return err == nil && p.i == len(s)
}

func (c *canonicalizer) bytes(f *interaction.Field, n *jnode) error {
	if n.kind != jArray {
		return c.wrongKind(n, "an array of integers 0..255")
	}
	if len(n.elems) > f.MaxBytes() {
		return c.fail(RuleBytesLength, "%d elements; at most %d are admitted", len(n.elems), f.MaxBytes())
	}
	c.out = append(c.out, '[')
	for i, e := range n.elems {
		// The JSON grammar already excludes leading zeros and '+', so a number token that
		// parses as a uint8 is the byte's canonical form.
		if _, err := strconv.ParseUint(e.text, 10, 8); e.kind != jNumber || e.frac || e.exp || err != nil {
			c.push(fmt.Sprintf("[%d]", i))
			return c.fail(RuleBytesElement, "a byte is an integer 0..255 written as a JSON number")
		}
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, e.text...)
	}
	c.out = append(c.out, ']')
	return nil
}

// wrongKind refuses a JSON value of the wrong type; null gets its own rule, because a null
// is where a fabricated default would otherwise go.
func (c *canonicalizer) wrongKind(n *jnode, want string) *Error {
	if n.kind == jNull {
		return c.fail(RuleNull, "null where %s is required; nothing is filled in", want)
	}
	return c.fail(RuleRepresentation, "%s where %s is required", n.kind, want)
}

func field(n *jnode, key string) *jnode {
	for _, m := range n.members {
		if m.key == key {
			return m.value
		}
	}
	return nil
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}
