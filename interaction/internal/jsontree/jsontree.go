// Package jsontree parses one JSON text (RFC 8259) into an ordered tree that keeps every
// object member, duplicates included, in document order. It is the generic reading the
// step-wise reference decoder walks; it never converts numbers (their token text is kept) and
// refuses lone UTF-16 surrogates in \u escapes rather than replacing them.
package jsontree

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxNesting bounds container nesting; deeper input is refused as invalid JSON.
const MaxNesting = 128

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

// Node is one JSON value. Text holds the decoded string or the number's token text.
type Node struct {
	Kind    Kind
	Offset  int // byte offset of the value's first byte
	Text    string
	Members []Member
	Elems   []*Node
}

// Member is one object member.
type Member struct {
	Key   string
	Value *Node
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

// SyntaxError reports where and why the text is not JSON.
type SyntaxError struct {
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Reason) }

// Parse parses exactly one JSON value, optionally surrounded by JSON whitespace.
func Parse(text []byte) (*Node, error) {
	p := &parser{s: text}
	p.space()
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.fail("unexpected data after the top-level value")
	}
	return n, nil
}

type parser struct {
	s []byte
	i int
}

func (p *parser) fail(format string, args ...any) error {
	return &SyntaxError{Offset: p.i, Reason: fmt.Sprintf(format, args...)}
}

func (p *parser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*Node, error) {
	if p.i >= len(p.s) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		at := p.i
		s, err := p.str()
		return &Node{Kind: String, Offset: at, Text: s}, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	for _, lit := range [...]struct {
		text string
		kind Kind
	}{{"true", True}, {"false", False}, {"null", Null}} {
		if len(p.s)-p.i >= len(lit.text) && string(p.s[p.i:p.i+len(lit.text)]) == lit.text {
			n := &Node{Kind: lit.kind, Offset: p.i}
			p.i += len(lit.text)
			return n, nil
		}
	}
	return nil, p.fail("invalid character %q", rune(p.s[p.i]))
}

func (p *parser) object(depth int) (*Node, error) {
	if depth > MaxNesting {
		return nil, p.fail("nesting deeper than %d", MaxNesting)
	}
	n := &Node{Kind: Object, Offset: p.i}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return n, nil
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, p.fail("expected a member name")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		n.Members = append(n.Members, Member{Key: key, Value: v})
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in an object")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return n, nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (*Node, error) {
	if depth > MaxNesting {
		return nil, p.fail("nesting deeper than %d", MaxNesting)
	}
	n := &Node{Kind: Array, Offset: p.i}
	p.i++
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return n, nil
	}
	for {
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("unexpected end of input in an array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return n, nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and keeps its text.
func (p *parser) number() (*Node, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		p.digits()
	default:
		return nil, p.fail("invalid number")
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, p.fail("invalid number: no digits after '.'")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, p.fail("invalid number: no digits in the exponent")
		}
	}
	return &Node{Kind: Number, Offset: start, Text: string(p.s[start:p.i])}, nil
}

func (p *parser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// str scans a string literal starting at its opening quote and returns the decoded text.
func (p *parser) str() (string, error) {
	p.i++
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			s := string(p.s[start:p.i])
			p.i++
			return s, nil
		}
		if c == '\\' {
			return p.escapedStr(start)
		}
		if c < 0x20 {
			return "", p.fail("unescaped control character in a string")
		}
		p.i++
	}
	return "", p.fail("unterminated string")
}

func (p *parser) escapedStr(start int) (string, error) {
	buf := append([]byte(nil), p.s[start:p.i]...)
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
		p.i++
		if p.i >= len(p.s) {
			break
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := p.unicodeEscape()
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i--
			return "", p.fail("invalid escape character %q", rune(e))
		}
	}
	return "", p.fail("unterminated string")
}

// unicodeEscape reads the four hex digits of a \u escape (p.i is just past the 'u'), pairing surrogates.
func (p *parser) unicodeEscape() (rune, error) {
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
	if len(p.s)-p.i < 2 || p.s[p.i] != '\\' || p.s[p.i+1] != 'u' {
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
	for _, c := range p.s[p.i : p.i+4] {
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
