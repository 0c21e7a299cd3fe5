// Package jsontext is the one JSON reader of the module: it parses one JSON text (RFC 8259)
// into an ordered tree that keeps every object member in document order and every number as
// its token text (never float64), and it refuses lone UTF-16 surrogates in \u escapes rather
// than replacing them.
//
// Options choose what a caller needs beyond that: a nesting bound, refusing any object that
// names a member twice, and a record of every deviation from the canonical form that
// canonjson writes (insignificant whitespace, a string or key not escaped canonically). The
// strict value decoder, the provider-text reader, the provider schema profiles and the tests
// all read JSON through it. Decode fills a Go value from a parsed text with encoding/json's
// rules: the configuration documents (keyrings, model scripts, fallback lists, drain
// markers, update manifests), the recorded turns and the providers' tool schemas are read
// with it.
package jsontext

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// DefaultMaxNesting bounds container nesting when Options.MaxNesting is zero.
const DefaultMaxNesting = 128

// Kind is the JSON type of a Node.
type Kind uint8

// Node kinds.
const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"null", "false", "true", "number", "string", "array", "object"}

func (k Kind) String() string { return kindNames[k] }

// Node is one JSON value. Text holds a string's decoded text or a number's token text.
type Node struct {
	Kind    Kind
	Offset  int  // byte offset of the value's first byte
	End     int  // byte offset just past the value's last byte
	Frac    bool // a number with a fraction part
	Exp     bool // a number with an exponent part
	Text    string
	Members []Member
	Elems   []*Node
}

// Member is one object member.
type Member struct {
	Key    string
	Offset int // byte offset of the key's opening quote
	Value  *Node
}

// Last returns the value of the last member named key (the reading a generic map that keeps
// the last occurrence would give), or nil.
func (n *Node) Last(key string) *Node {
	for i := len(n.Members) - 1; i >= 0; i-- {
		if n.Members[i].Key == key {
			return n.Members[i].Value
		}
	}
	return nil
}

// Options select the reading. The zero value parses any JSON text nested at most
// DefaultMaxNesting deep, keeping duplicate members.
type Options struct {
	MaxNesting       int  // containers nested deeper are refused; 0 means DefaultMaxNesting
	RejectDuplicates bool // an object naming a member twice is refused (Duplicate set)
}

// Deviations records how an admitted text differs from its canonical rendering, as far as
// the text alone tells (member order and number forms are for a schema to judge).
type Deviations struct {
	Spaced  bool // insignificant whitespace
	Escaped bool // a string or key literal that is not the canonical escaping of its text
}

// SyntaxError reports where and why the text is not admitted.
type SyntaxError struct {
	Offset    int
	Reason    string
	Duplicate bool // an object names a member twice (only with RejectDuplicates)
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Reason) }

// Parse parses exactly one JSON value, optionally surrounded by JSON whitespace. A string
// without escapes is a substring of text (no copy).
func Parse(text string, o Options) (*Node, Deviations, error) {
	p := &parser{s: text, max: o.MaxNesting, dups: o.RejectDuplicates}
	if p.max == 0 {
		p.max = DefaultMaxNesting
	}
	p.space()
	n, err := p.value()
	if err == nil {
		p.space()
		if p.i != len(p.s) {
			err = p.fail("unexpected data after the top-level value")
		}
	}
	if err != nil {
		return nil, p.dev, err
	}
	return n, p.dev, nil
}

type parser struct {
	s     string
	i     int
	depth int
	max   int
	dups  bool
	dev   Deviations
}

func (p *parser) fail(format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: p.i, Reason: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
			p.dev.Spaced = true
		default:
			return
		}
	}
}

func (p *parser) value() (*Node, *SyntaxError) {
	n, err := p.token()
	if err == nil {
		n.End = p.i
	}
	return n, err
}

// token reads the value at p.i.
func (p *parser) token() (*Node, *SyntaxError) {
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		n := &Node{Kind: String, Offset: p.i}
		var err *SyntaxError
		n.Text, err = p.str()
		return n, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range [...]struct {
		word string
		kind Kind
	}{{"true", True}, {"false", False}, {"null", Null}} {
		if strings.HasPrefix(p.s[p.i:], lit.word) {
			n := &Node{Kind: lit.kind, Offset: p.i}
			p.i += len(lit.word)
			return n, nil
		}
	}
	return nil, p.fail("invalid character %q", rune(p.s[p.i]))
}

func (p *parser) enter() *SyntaxError {
	if p.depth++; p.depth > p.max {
		return p.fail("nesting deeper than %d", p.max)
	}
	return nil
}

func (p *parser) object() (*Node, *SyntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := &Node{Kind: Object, Offset: p.i}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		p.depth--
		return n, nil
	}
	var keys map[string]struct{}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("expected a member name")
		}
		m := Member{Offset: p.i}
		var err *SyntaxError
		if m.Key, err = p.str(); err != nil {
			return nil, err
		}
		if p.dups {
			var dup bool
			if dup, keys = seen(n, keys, m.Key); dup {
				return nil, &SyntaxError{Offset: m.Offset, Reason: "the member " + canonjson.Quote(m.Key, 64) + " occurs twice", Duplicate: true}
			}
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		p.space()
		if m.Value, err = p.value(); err != nil {
			return nil, err
		}
		n.Members = append(n.Members, m)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in an object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			return n, nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

// dupLimit is where duplicate detection switches from scanning the members to a set: the
// objects of a value are small, but an untrusted text may hold one with tens of thousands of
// members, which a scan would make quadratic.
const dupLimit = 16

// seen reports whether key was already a member of the object being read, recording it.
func seen(n *Node, set map[string]struct{}, key string) (bool, map[string]struct{}) {
	if set == nil && len(n.Members) < dupLimit {
		for _, m := range n.Members {
			if m.Key == key {
				return true, nil
			}
		}
		return false, nil
	}
	if set == nil {
		set = make(map[string]struct{}, 2*dupLimit)
		for _, m := range n.Members {
			set[m.Key] = struct{}{}
		}
	}
	if _, dup := set[key]; dup {
		return true, set
	}
	set[key] = struct{}{}
	return false, set
}

func (p *parser) array() (*Node, *SyntaxError) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	n := &Node{Kind: Array, Offset: p.i}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		p.depth--
		return n, nil
	}
	for {
		p.space()
		e, err := p.value()
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, e)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in an array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return n, nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and keeps its text.
func (p *parser) number() (*Node, *SyntaxError) {
	n := &Node{Kind: Number, Offset: p.i}
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, p.fail("invalid number: no digits after '.'")
		}
		n.Frac = true
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, p.fail("invalid number: no digits in the exponent")
		}
		n.Exp = true
	}
	n.Text = p.s[n.Offset:p.i]
	return n, nil
}

func (p *parser) digits() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// IsNumber reports whether s is exactly one JSON number token.
func IsNumber(s string) bool {
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return false
	}
	p := &parser{s: s}
	_, err := p.number()
	return err == nil && p.i == len(s)
}

// str reads a string literal starting at its opening quote and returns the decoded text.
func (p *parser) str() (string, *SyntaxError) {
	p.i++
	start := p.i
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], nil
		case c == '\\':
			return p.escapedStr(start)
		case c < 0x20:
			return "", p.fail("unescaped control character in a string")
		}
		p.i++
	}
	return "", p.fail("unterminated string")
}

func (p *parser) escapedStr(start int) (string, *SyntaxError) {
	buf := []byte(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("unescaped control character in a string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		var err *SyntaxError
		if buf, err = p.escape(buf); err != nil {
			return "", err
		}
	}
	return "", p.fail("unterminated string")
}

// escape decodes the escape at p.i onto buf, noting one that is not canonical.
func (p *parser) escape(buf []byte) ([]byte, *SyntaxError) {
	at := p.i
	p.i++
	if p.i >= len(p.s) {
		return nil, p.fail("unterminated string")
	}
	e := p.s[p.i]
	p.i++
	r, ok := Unescape(e)
	switch {
	case e == 'u':
		var err *SyntaxError
		if r, err = p.unicodeEscape(); err != nil {
			return nil, err
		}
	case !ok:
		p.i--
		return nil, p.fail("invalid escape character %q", rune(e))
	}
	if _, n := canonjson.CanonicalEscape(p.s[at:]); n != p.i-at {
		p.dev.Escaped = true
	}
	return utf8.AppendRune(buf, r), nil
}

// Unescape returns the character that the one-letter JSON escape e (the byte after a
// backslash) stands for. ok is false for 'u', whose four hex digits follow, and for every byte
// that starts no JSON escape.
func Unescape(e byte) (r rune, ok bool) {
	switch e {
	case '"', '\\', '/':
		return rune(e), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// unicodeEscape reads the four hex digits of a \u escape (p.i is just past the 'u'), pairing
// surrogates.
func (p *parser) unicodeEscape() (rune, *SyntaxError) {
	r, ok := p.hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if r >= 0xDC00 {
		return 0, p.fail("lone low surrogate in a \\u escape")
	}
	if !strings.HasPrefix(p.s[p.i:], `\u`) {
		return 0, p.fail("lone high surrogate in a \\u escape")
	}
	p.i += 2
	lo, ok := p.hex4()
	if !ok {
		return 0, p.fail("invalid \\u escape")
	}
	if lo < 0xDC00 || lo > 0xDFFF {
		return 0, p.fail("lone high surrogate in a \\u escape")
	}
	return utf16.DecodeRune(r, lo), nil
}

func (p *parser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(p.s[p.i : p.i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
