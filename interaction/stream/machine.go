package stream

import (
	"fmt"
	"math"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// machine is the typed layer: a pushdown automaton over a Grammar's ops. It admits exactly
// the prefixes of canonical value documents of the schema, so a byte it refuses proves the
// document can never be admitted. Its state carries across pushes; nothing depends on where
// a chunk ended.
type machine struct {
	frames []frame
	cur    *op // the op in progress: &top().ops[top().pc]
	work   int

	// State of the op in progress at the top frame.
	pos    int    // bytes of the op matched so far, or the op's sub-state
	mag    uint64 // opInt magnitude; opBytes element value
	count  int    // opStr decoded bytes; opBytes elements
	lo, hi int    // opCase: the range of ids still matching
	lit    uint8  // opBool: the literal chosen by its first byte, an index of bools
	neg    bool   // opInt
	hexHi  byte   // opStr: the high digit of a \u00XX escape
	lead0  bool   // opBytes: the element began with 0, so no digit may follow

	done bool
}

type frame struct {
	ops []op
	pc  int
}

// Sub-states of the scalar ops, kept in machine.pos.
const (
	intOpen    = 0 // expects '"'
	intFirst   = 1 // expects '-' or a digit
	intMinus   = 2 // after '-', expects 1-9
	intZero    = 3 // after "0", expects '"'
	intDigits  = 4 // expects a digit or '"'
	strOpen    = 0
	strContent = 1
	strEscape  = 2 // after '\'
	strU0      = 3 // \u, expects 0
	strU00     = 4 // \u0, expects 0
	strUHi     = 5 // \u00, expects 0 or 1
	strULo     = 6 // \u00[01], expects a lowercase hex digit
	bytesOpen  = 0 // expects '['
	bytesFirst = 1 // after '[', expects a digit or ']'
	bytesElem  = 2 // in an element, expects a digit, ',' or ']'
	bytesNext  = 3 // after ',', expects a digit
)

func (m *machine) reset(envelope []op) {
	m.frames = append(m.frames[:0], frame{ops: envelope})
	m.cur = &envelope[0]
}

func (m *machine) top() *frame { return &m.frames[len(m.frames)-1] }

// step consumes one byte, returning why it cannot be part of any admitted document.
func (m *machine) step(b byte) string {
	if m.done {
		return "the document is complete"
	}
	if m.work++; m.work > MaxGrammarWork {
		return fmt.Sprintf("grammar work exceeds %d", MaxGrammarWork)
	}
	o := m.cur
	switch o.kind {
	case opLit:
		if b != o.lit[m.pos] {
			return fmt.Sprintf("expected %q, got %q", o.lit[m.pos], b)
		}
		if m.pos++; m.pos == len(o.lit) {
			return m.advance()
		}
		return ""
	case opBool:
		return m.boolean(b)
	case opInt:
		return m.integer(o, b)
	case opStr:
		return m.str(o, b)
	case opBytes:
		return m.bytes(o, b)
	case opCase:
		return m.caseID(o, b)
	case opEnd:
		if b != '\n' {
			return fmt.Sprintf("expected the terminal LF, got %q", b)
		}
		m.done = true
		return ""
	}
	return "internal: no op"
}

// quickPlain takes the two transitions of most bytes of a document, for a byte the scanner
// found inert: plain string content within the bound, and a literal byte that does not end
// the literal. It reports false, changing nothing, for anything else.
func (m *machine) quickPlain(b byte) bool {
	o := m.cur
	if m.done || m.work >= MaxGrammarWork {
		return false
	}
	switch {
	case o.kind == opStr && m.pos == strContent && b != '\\' && m.count < o.max:
		m.count++
	case o.kind == opLit && m.pos+1 < len(o.lit) && b == o.lit[m.pos]:
		m.pos++
	default:
		return false
	}
	m.work++
	return true
}

// quickStep takes the common transitions quickPlain leaves — a literal byte the scanner had
// to check (a quote, a brace), the digits and commas of a bytes array — exactly as step
// would, and reports false, changing nothing, for anything else, which step then judges.
func (m *machine) quickStep(b byte) bool {
	o := m.cur
	if m.done || m.work >= MaxGrammarWork {
		return false
	}
	switch o.kind {
	case opLit:
		if m.pos+1 >= len(o.lit) || b != o.lit[m.pos] {
			return false
		}
		m.pos++
	case opBytes:
		if !m.quickBytes(o, b) {
			return false
		}
	default:
		return false
	}
	m.work++
	return true
}

// quickBytes takes a digit or comma of a bytes array that step would accept, without
// charging work.
func (m *machine) quickBytes(o *op, b byte) bool {
	digit := b >= '0' && b <= '9'
	switch {
	case m.pos == bytesElem && digit && !m.lead0 && m.mag*10+uint64(b-'0') <= 255:
		m.mag = m.mag*10 + uint64(b-'0')
	case m.pos == bytesElem && b == ',':
		m.pos = bytesNext
	case m.pos == bytesNext && digit && m.count < o.max:
		m.count++
		m.mag, m.pos, m.lead0 = uint64(b-'0'), bytesElem, b == '0'
	default:
		return false
	}
	return true
}

// next is advance where it is quickest: the next op is in the same frame and not a nested
// type. It reports false, changing nothing, otherwise.
func (m *machine) next() bool {
	f := &m.frames[len(m.frames)-1]
	pc := f.pc + 1
	if pc >= len(f.ops) || f.ops[pc].kind == opNested {
		return false
	}
	f.pc = pc
	m.cur = &f.ops[pc]
	m.pos, m.count, m.mag, m.neg = m.cur.start, 0, 0, false
	return true
}

// advance finishes the current op and moves to the next, entering nested frames and leaving
// finished ones.
func (m *machine) advance() string {
	m.pos, m.count, m.mag, m.neg = 0, 0, 0, false
	for {
		f := m.top()
		if f.pc++; f.pc < len(f.ops) {
			next := &f.ops[f.pc]
			m.cur, m.pos = next, next.start
			if next.kind == opNested {
				if len(m.frames) == MaxGrammarStack {
					return fmt.Sprintf("grammar stack exceeds %d", MaxGrammarStack)
				}
				m.frames = append(m.frames, frame{ops: *next.typ})
				m.cur = &(*next.typ)[0]
			}
			return ""
		}
		m.frames = m.frames[:len(m.frames)-1]
	}
}

// bools are the literals of opBool, kept in machine.lit by index, which keeps a decoder small.
var bools = [...]string{"", "true", "false"}

func (m *machine) boolean(b byte) string {
	if m.pos == 0 {
		switch b {
		case 't':
			m.lit = 1
		case 'f':
			m.lit = 2
		default:
			return fmt.Sprintf("expected true or false, got %q", b)
		}
	} else if lit := bools[m.lit]; b != lit[m.pos] {
		return fmt.Sprintf("expected %q of %s, got %q", lit[m.pos], lit, b)
	}
	if m.pos++; m.pos == len(bools[m.lit]) {
		return m.advance()
	}
	return ""
}

// integer checks the bound on the digits seen so far: a positive magnitude only grows and a
// negative one only shrinks the value, so the side a further digit can cross is refused at
// once; the other side is settled by the closing quote.
func (m *machine) integer(o *op, b byte) string {
	ib := &o.ints
	switch {
	case m.pos == intOpen && b == '"':
		m.pos = intFirst
	case m.pos == intFirst && b == '-' && ib.negOK:
		m.neg, m.pos = true, intMinus
	case m.pos == intFirst && b == '0' && ib.zeroOK:
		m.pos = intZero
	case m.pos == intFirst && b >= '1' && b <= '9' && ib.posOK,
		m.pos == intMinus && b >= '1' && b <= '9':
		m.mag, m.pos = uint64(b-'0'), intDigits
		return m.magnitudeLimit(ib)
	case m.pos == intDigits && b >= '0' && b <= '9':
		d := uint64(b - '0')
		if m.mag > (math.MaxUint64-d)/10 {
			return fmt.Sprintf("%s is outside its range", o.field.Representation())
		}
		m.mag = m.mag*10 + d
		return m.magnitudeLimit(ib)
	case m.pos == intZero && b == '"':
		return m.advance()
	case m.pos == intDigits && b == '"':
		if m.neg && m.mag < ib.negMin || !m.neg && m.mag < ib.posMin {
			return fmt.Sprintf("the value is outside the bounds of %s", o.field.StableID())
		}
		return m.advance()
	default:
		return fmt.Sprintf("%q cannot continue a canonical decimal string within the bounds of %s", b, o.field.StableID())
	}
	return ""
}

func (m *machine) magnitudeLimit(ib *intBounds) string {
	if m.neg && m.mag > ib.negMax || !m.neg && m.mag > ib.posMax {
		return "the value is outside its field's bounds"
	}
	return ""
}

func (m *machine) str(o *op, b byte) string {
	switch m.pos {
	case strOpen:
		if b != '"' {
			return fmt.Sprintf("expected a string, got %q", b)
		}
		m.pos = strContent
	case strContent:
		switch b {
		case '"':
			return m.advance()
		case '\\':
			m.pos = strEscape
		}
		if m.count++; m.count > o.max {
			return fmt.Sprintf("the string exceeds %d UTF-8 bytes", o.max)
		}
	case strEscape:
		switch b {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			m.pos = strContent
		case 'u':
			m.pos = strU0
		default:
			return fmt.Sprintf("\\%c is not a canonical escape", b)
		}
	case strU0, strU00:
		if b != '0' {
			return "only control characters are escaped as \\u00xx"
		}
		m.pos++
	case strUHi:
		if b != '0' && b != '1' {
			return "only control characters are escaped as \\u00xx"
		}
		m.hexHi, m.pos = b-'0', strULo
	case strULo:
		if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f') {
			return "a \\u escape uses lowercase hex"
		}
		if c := m.hexHi<<4 | hexValue(b); canonjson.ShortEscape(c) {
			return fmt.Sprintf("U+%04X has a short escape", c)
		}
		m.pos = strContent
	}
	return ""
}

func hexValue(b byte) byte {
	if b <= '9' {
		return b - '0'
	}
	return b - 'a' + 10
}

func (m *machine) bytes(o *op, b byte) string {
	switch {
	case m.pos == bytesOpen && b == '[':
		m.pos = bytesFirst
	case (m.pos == bytesFirst || m.pos == bytesNext) && b >= '0' && b <= '9':
		if m.count++; m.count > o.max {
			return fmt.Sprintf("more than %d bytes", o.max)
		}
		m.mag, m.pos, m.lead0 = uint64(b-'0'), bytesElem, b == '0'
	case m.pos == bytesElem && b >= '0' && b <= '9':
		if m.lead0 {
			return "a byte has no leading zero"
		}
		if m.mag = m.mag*10 + uint64(b-'0'); m.mag > 255 {
			return "a byte is at most 255"
		}
	case m.pos == bytesElem && b == ',':
		m.pos = bytesNext
	case (m.pos == bytesFirst || m.pos == bytesElem) && b == ']':
		return m.advance()
	default:
		return fmt.Sprintf("%q cannot continue an array of bytes", b)
	}
	return ""
}

// caseID narrows the sorted case ids to those that extend the bytes seen so far; the
// closing quote selects the one id equal to them and continues with its case's ops.
func (m *machine) caseID(o *op, b byte) string {
	t := o.cases
	if m.pos == 0 {
		m.lo, m.hi = 0, len(t.ids)
	}
	k := m.pos
	if b == '"' {
		if k == 0 || m.lo == m.hi || len(t.ids[m.lo]) != k {
			return "not a case of this variant"
		}
		f := m.top()
		f.ops, f.pc = t.ops[m.lo], 0
		m.cur, m.pos = &f.ops[0], 0
		return ""
	}
	if m.hi-m.lo == 1 { // one candidate left: compare its next byte
		m.work++
		if id := t.ids[m.lo]; len(id) > k && id[k] == b {
			m.pos = k + 1
			return ""
		}
		return "not a case of this variant"
	}
	// Ids sharing the k bytes seen so far are contiguous, an id of length k first; among the
	// longer ones the k-th byte ascends, so both ends of the new range are binary searches.
	lo := m.search(t.ids, m.lo, m.hi, k, b, false)
	end := m.search(t.ids, lo, m.hi, k, b, true)
	if lo == end {
		return "not a case of this variant"
	}
	m.lo, m.hi, m.pos = lo, end, k+1
	return ""
}

// search returns the first index in [lo, hi) whose id has a k-th byte >= b (> b if after),
// charging each comparison as grammar work.
func (m *machine) search(ids []string, lo, hi, k int, b byte, after bool) int {
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		m.work++
		id := ids[mid]
		if len(id) > k && (id[k] > b || !after && id[k] == b) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
