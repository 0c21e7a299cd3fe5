package negotiate

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/canonjson"
)

// The provider-text parser: one JSON text (RFC 8259) into an ordered tree that keeps number
// tokens as text (never float64), refuses duplicate keys in any object, refuses lone UTF-16
// surrogates rather than replacing them, and notes every deviation from canonical form that
// canonicalization then reports.

type jkind uint8

const (
	jNull jkind = iota
	jFalse
	jTrue
	jNumber
	jString
	jArray
	jObject
)

var jkindNames = [...]string{"null", "false", "true", "number", "string", "array", "object"}

func (k jkind) String() string { return jkindNames[k] }

// jnode is one JSON value. text is a string's decoded text or a number's token.
type jnode struct {
	kind    jkind
	off     int
	text    string
	frac    bool // number: has a fraction part
	exp     bool // number: has an exponent part
	members []jmember
	elems   []*jnode
}

type jmember struct {
	key   string
	off   int
	value *jnode
}

// maxNesting bounds container nesting: the deepest value document of any schema nests
// 2*MaxDepth+1 containers inside the envelope's one.
const maxNesting = 2*interaction.MaxDepth + 2

type parser struct {
	s string
	i int
	// spaced and escaped note the deviations that are not errors: insignificant whitespace,
	// and a string or key literal that is not the canonical rendering of its text.
	spaced, escaped bool
	depth           int
}

type syntaxError struct {
	off    int
	reason string
	rule   Rule
}

func (p *parser) fail(reason string) *syntaxError {
	return &syntaxError{off: p.i, reason: reason, rule: RuleJSON}
}

func parseJSON(text string) (*jnode, *parser, *syntaxError) {
	p := &parser{s: text}
	p.space()
	n, err := p.value()
	if err != nil {
		return nil, p, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p, p.fail("unexpected data after the top-level value")
	}
	return n, p, nil
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
			p.spaced = true
		default:
			return
		}
	}
}

func (p *parser) value() (*jnode, *syntaxError) {
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		n := &jnode{kind: jString, off: p.i}
		var err *syntaxError
		n.text, err = p.str()
		return n, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range [...]struct {
		word string
		kind jkind
	}{{"true", jTrue}, {"false", jFalse}, {"null", jNull}} {
		if strings.HasPrefix(p.s[p.i:], lit.word) {
			n := &jnode{kind: lit.kind, off: p.i}
			p.i += len(lit.word)
			return n, nil
		}
	}
	return nil, p.fail("unexpected character")
}

func (p *parser) enter() *syntaxError {
	if p.depth++; p.depth > maxNesting {
		return p.fail("containers nest deeper than any value document of any schema")
	}
	return nil
}

func (p *parser) object() (*jnode, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := &jnode{kind: jObject, off: p.i}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return n, nil
	}
	var keys map[string]struct{}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("expected a member name")
		}
		m := jmember{off: p.i}
		var err *syntaxError
		if m.key, err = p.str(); err != nil {
			return nil, err
		}
		var dup bool
		if dup, keys = seen(n, keys, m.key); dup {
			return nil, &syntaxError{off: m.off, reason: "the member " + canonjson.Quote(m.key, 64) + " occurs twice", rule: RuleDuplicateKey}
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		p.space()
		if m.value, err = p.value(); err != nil {
			return nil, err
		}
		n.members = append(n.members, m)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			p.space()
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			p.depth--
			return n, nil
		}
		return nil, p.fail("expected ',' or '}'")
	}
}

// dupLimit is where duplicate detection switches from scanning the members to a set: the
// objects of a value are small, but an untrusted text may hold one with tens of thousands of
// members, which a scan would make quadratic.
const dupLimit = 16

// seen reports whether key was already a member of the object being read, recording it.
func seen(n *jnode, set map[string]struct{}, key string) (bool, map[string]struct{}) {
	if set == nil && len(n.members) < dupLimit {
		for _, m := range n.members {
			if m.key == key {
				return true, nil
			}
		}
		return false, nil
	}
	if set == nil {
		set = make(map[string]struct{}, 2*dupLimit)
		for _, m := range n.members {
			set[m.key] = struct{}{}
		}
	}
	if _, dup := set[key]; dup {
		return true, set
	}
	set[key] = struct{}{}
	return false, set
}

func (p *parser) array() (*jnode, *syntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := &jnode{kind: jArray, off: p.i}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		return n, nil
	}
	for {
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, e)
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			p.space()
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			p.depth--
			return n, nil
		}
		return nil, p.fail("expected ',' or ']'")
	}
}

// number scans the JSON number grammar and keeps the token's text.
func (p *parser) number() (*jnode, *syntaxError) {
	n := &jnode{kind: jNumber, off: p.i}
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return nil, p.fail("a number needs digits")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, p.fail("a fraction needs digits")
		}
		n.frac = true
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, p.fail("an exponent needs digits")
		}
		n.exp = true
	}
	n.text = p.s[start:p.i]
	return n, nil
}

func (p *parser) digits() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// str reads a string literal. A literal without escapes is a substring of the input (no
// copy); one with escapes is decoded, and noted when it is not the canonical escaping.
func (p *parser) str() (string, *syntaxError) {
	p.i++ // the opening quote
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", p.fail("a control character must be escaped in a string")
		}
		p.i++
	}
	return "", p.fail("unterminated string")
}

func (p *parser) escapedStr(start int) (string, *syntaxError) {
	buf := []byte(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("a control character must be escaped in a string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		var err *syntaxError
		if buf, err = p.escape(buf); err != nil {
			return "", err
		}
	}
	return "", p.fail("unterminated string")
}

// escape decodes the escape at p.i onto buf.
func (p *parser) escape(buf []byte) ([]byte, *syntaxError) {
	if p.i+1 >= len(p.s) {
		return nil, p.fail("unterminated escape")
	}
	e := p.s[p.i+1]
	if d, ok := shortEscapes[e]; ok {
		p.i += 2
		if e == '/' {
			p.escaped = true // "\/" is never the canonical rendering of '/'
		}
		return append(buf, d), nil
	}
	if e != 'u' {
		return nil, p.fail("invalid escape")
	}
	r, ok := p.hex4(p.i + 2)
	if !ok {
		return nil, p.fail("invalid \\u escape")
	}
	at := p.i
	p.i += 6
	if utf16.IsSurrogate(r) {
		lo, ok := p.hex4(p.i + 2)
		if r >= 0xDC00 || !ok || !strings.HasPrefix(p.s[p.i:], `\u`) || utf16.DecodeRune(r, lo) == utf8.RuneError {
			return nil, &syntaxError{off: at, reason: "a lone UTF-16 surrogate is not text", rule: RuleJSON}
		}
		r = utf16.DecodeRune(r, lo)
		p.i += 6
	}
	if !canonicalUEscape(r, p.s[at:p.i]) {
		p.escaped = true
	}
	return utf8.AppendRune(buf, r), nil
}

var shortEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// canonicalUEscape reports whether lit (a \u escape of r) is how canonical JSON writes r:
// only a control without a short escape, in lowercase hex.
func canonicalUEscape(r rune, lit string) bool {
	if r >= 0x20 || canonjson.ShortEscape(byte(r)) {
		return false
	}
	q := canonjson.AppendString(nil, string(r)) // "\u00xx", quoted
	return lit == string(q[1:len(q)-1])
}

func (p *parser) hex4(at int) (rune, bool) {
	if at+4 > len(p.s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[at : at+4]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
