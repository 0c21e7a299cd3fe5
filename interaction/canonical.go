package interaction

import (
	"strings"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// recognize is Decode's single pass: it admits text (valid UTF-8, at most MaxDocumentBytes)
// exactly when text is the canonical value document of a value of s, and returns nil
// otherwise. It never diagnoses: on any deviation Decode falls back to the step-wise
// reference, which then finds the first failing step. Because a canonical document passes
// every step of the reference, and the reference admits only documents equal to their
// canonical rendering, both admit the same documents with the same values (the fuzz tests
// check this).
func (s *Schema) recognize(text string) *Value {
	r := recognizer{s: text}
	if !r.lit(s.valuePrefix) {
		return nil
	}
	v := r.value(s.root)
	if v == nil || text[r.i:] != "}\n" {
		return nil
	}
	v.doc = text
	return v
}

type recognizer struct {
	s string
	i int
}

func (r *recognizer) lit(p string) bool {
	if !strings.HasPrefix(r.s[r.i:], p) {
		return false
	}
	r.i += len(p)
	return true
}

func (r *recognizer) byte(c byte) bool {
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *recognizer) value(t *Type) *Value {
	if !r.byte('{') {
		return nil
	}
	v := &Value{typ: t}
	list := &t.fields
	if t.kind == Variant {
		if !r.lit(`"case":"`) {
			return nil
		}
		end := strings.IndexByte(r.s[r.i:], '"')
		if end < 0 {
			return nil
		}
		c := t.caseBy[r.s[r.i:r.i+end]]
		if c == nil {
			return nil
		}
		r.i += end
		if !r.lit(`","fields":`) {
			return nil
		}
		v.cas, list = c, &c.fields
	} else if !r.lit(`"fields":`) {
		return nil
	}
	if v.fields = r.fields(list); v.fields == nil || !r.byte('}') {
		return nil
	}
	return v
}

// fields returns nil on a mismatch and a non-nil slice otherwise.
func (r *recognizer) fields(list *fieldList) []FieldValue {
	if !r.byte('{') {
		return nil
	}
	out := make([]FieldValue, len(list.list))
	for i, f := range list.list {
		if i > 0 && !r.byte(',') || !r.lit(f.key) {
			return nil
		}
		out[i].field = f
		if !r.leaf(&out[i]) {
			return nil
		}
	}
	if !r.byte('}') {
		return nil
	}
	if len(out) == 0 {
		return []FieldValue{}
	}
	return out
}

func (r *recognizer) leaf(fv *FieldValue) bool {
	f := fv.field
	switch f.rep {
	case Bool:
		if r.lit("true") {
			fv.bits = 1
			return true
		}
		return r.lit("false")
	case I32, I64, U32, U64:
		return r.integer(fv)
	case String:
		s, ok := r.str(f.maxBytes)
		fv.text = s
		return ok
	case Bytes:
		return r.bytes(fv)
	}
	fv.value = r.value(f.nested)
	return fv.value != nil
}

func (r *recognizer) integer(fv *FieldValue) bool {
	if !r.byte('"') {
		return false
	}
	end := strings.IndexByte(r.s[r.i:], '"')
	if end < 0 {
		return false
	}
	v, syntax, fits := parseDecimal(r.s[r.i : r.i+end])
	if !syntax || !fits || v.Cmp(fv.field.min) < 0 || v.Cmp(fv.field.max) > 0 {
		return false
	}
	r.i += end + 1
	fv.bits = integerBits(v)
	return true
}

// str reads a canonical string literal of at most max decoded bytes.
func (r *recognizer) str(max int) (string, bool) {
	if !r.byte('"') {
		return "", false
	}
	start := r.i
	for j := start; j < len(r.s); j++ {
		switch c := r.s[j]; {
		case c == '"':
			if j-start > max {
				return "", false
			}
			r.i = j + 1
			return r.s[start:j], true
		case c == '\\':
			r.i = j
			return r.escapedStr(start, max)
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// escapedStr continues str for a literal with escapes, admitting only canonical ones. Runs
// of plain bytes are copied whole.
func (r *recognizer) escapedStr(start, max int) (string, bool) {
	buf := make([]byte, 0, literalEnd(r.s, r.i)-start)
	run := start
	for j := start; j < len(r.s); {
		c := r.s[j]
		if c >= 0x20 && c != '"' && c != '\\' {
			j++
			continue
		}
		buf = append(buf, r.s[run:j]...)
		switch {
		case c == '"':
			if len(buf) > max {
				return "", false
			}
			r.i = j + 1
			return string(buf), true
		case c < 0x20:
			return "", false
		}
		d, n := canonjson.CanonicalEscape(r.s[j:])
		if n == 0 {
			return "", false
		}
		buf = append(buf, d)
		j += n
		run = j
	}
	return "", false
}

// literalEnd returns the offset of the quote closing the string literal that contains
// offset i, or len(s): the decoded text is never longer than the literal.
func literalEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case '\\':
			i += 2
		case '"':
			return i
		default:
			i++
		}
	}
	return len(s)
}

func (r *recognizer) bytes(fv *FieldValue) bool {
	if !r.byte('[') {
		return false
	}
	if r.byte(']') {
		return true
	}
	var buf []byte
	for {
		if len(buf) == fv.field.maxBytes {
			return false
		}
		x, ok := r.byteElement()
		if !ok {
			return false
		}
		buf = append(buf, x)
		if r.byte(']') {
			fv.text = string(buf)
			return true
		}
		if !r.byte(',') {
			return false
		}
	}
}

// byteElement reads a canonical decimal 0..255.
func (r *recognizer) byteElement() (byte, bool) {
	v, n := 0, 0
	for r.i+n < len(r.s) && n < 4 {
		c := r.s[r.i+n]
		if c < '0' || c > '9' {
			break
		}
		if n > 0 && v == 0 {
			return 0, false
		}
		v = v*10 + int(c-'0')
		n++
	}
	if n == 0 || v > 255 {
		return 0, false
	}
	r.i += n
	return byte(v), true
}
