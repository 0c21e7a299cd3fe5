package stream

import "fmt"

// scanner is the structural layer: UTF-8 across chunk boundaries, no raw whitespace or
// control bytes outside strings, string and escape well-formedness, bracket matching, depth
// and token bounds, and framing (one terminal LF right after the top-level value, nothing
// after it). It knows nothing of the schema. Every transition is O(1) and depends only on
// the byte and the state, never on chunk boundaries.
type scanner struct {
	started bool // the first byte has been accepted
	need    uint8
	lo, hi  byte // admissible range of the next UTF-8 continuation byte
	inStr   bool
	esc     uint8 // 0 none, 1 after '\', 2..5 hex digits read + 1
	depth   int
	arrays  uint64 // the open containers, bit i set when the one at depth i+1 is an array
	tokens  int
	closed  bool // the top-level container has closed
	ended   bool // the terminal LF has been accepted
}

// fail is a scanner refusal before it becomes an Outcome.
type fail struct {
	code Code
	msg  string
}

// step accepts one byte or says why not. ASCII in the body of the document, the common case,
// skips the framing, first-byte and UTF-8 checks that cannot apply to it.
func (s *scanner) step(b byte) *fail {
	if b >= 0x80 || s.need != 0 || s.closed || !s.started {
		return s.fullStep(b)
	}
	if s.inStr {
		return s.stringByte(b)
	}
	return s.structural(b)
}

// inert reports whether b leaves the scanner's state unchanged but for the count: plain text
// inside a string, or outside one a byte that is neither whitespace, control, quote nor
// bracket (the grammar judges the rest).
func (s *scanner) inert(b byte) bool {
	if s.need != 0 || s.esc != 0 || s.closed || !s.started || b < 0x21 || b >= 0x7F || b == '"' {
		return false
	}
	if s.inStr {
		return b != '\\'
	}
	return b != '{' && b != '[' && b != '}' && b != ']'
}

func (s *scanner) fullStep(b byte) *fail {
	if f := s.frame(b); f != nil || s.ended {
		return f
	}
	if !s.started && b != '{' {
		return &fail{CodeStart, fmt.Sprintf("the document must open with '{', not %q", b)}
	}
	if f := s.utf8(b); f != nil {
		return f
	}
	s.started = true
	if s.inStr {
		return s.stringByte(b)
	}
	return s.structural(b)
}

// frame handles bytes once the top-level value has closed.
func (s *scanner) frame(b byte) *fail {
	switch {
	case s.ended:
		return &fail{CodeTrailing, "a byte after the terminal LF"}
	case !s.closed:
		return nil
	case b == '\n':
		s.ended = true
		return nil
	}
	return &fail{CodeTrailing, fmt.Sprintf("the top-level value closed; only LF may follow, not %q", b)}
}

func (s *scanner) utf8(b byte) *fail {
	if s.need > 0 {
		if b < s.lo || b > s.hi {
			return &fail{CodeUTF8, fmt.Sprintf("invalid UTF-8 continuation byte 0x%02x", b)}
		}
		s.need--
		s.lo, s.hi = 0x80, 0xBF
		return nil
	}
	if b < 0x80 {
		return nil
	}
	s.lo, s.hi = 0x80, 0xBF
	switch {
	case b >= 0xC2 && b <= 0xDF:
		s.need = 1
	case b == 0xE0:
		s.need, s.lo = 2, 0xA0
	case b >= 0xE1 && b <= 0xEC || b == 0xEE || b == 0xEF:
		s.need = 2
	case b == 0xED:
		s.need, s.hi = 2, 0x9F
	case b == 0xF0:
		s.need, s.lo = 3, 0x90
	case b >= 0xF1 && b <= 0xF3:
		s.need = 3
	case b == 0xF4:
		s.need, s.hi = 3, 0x8F
	default:
		return &fail{CodeUTF8, fmt.Sprintf("invalid UTF-8 byte 0x%02x", b)}
	}
	return nil
}

func (s *scanner) stringByte(b byte) *fail {
	switch s.esc {
	case 0:
		switch {
		case b == '"':
			s.inStr = false
		case b == '\\':
			s.esc = 1
		case b < 0x20:
			return &fail{CodeString, fmt.Sprintf("unescaped control byte 0x%02x in a string", b)}
		}
	case 1:
		switch b {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.esc = 0
		case 'u':
			s.esc = 2
		default:
			return &fail{CodeString, fmt.Sprintf("unknown escape character %q", b)}
		}
	default:
		if !isHex(b) {
			return &fail{CodeString, fmt.Sprintf("%q is not a hex digit of a \\u escape", b)}
		}
		if s.esc++; s.esc == 6 {
			s.esc = 0
		}
	}
	return nil
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func (s *scanner) structural(b byte) *fail {
	switch {
	case b == ' ' || b < 0x20 || b == 0x7F:
		return &fail{CodeWhitespace, fmt.Sprintf("raw byte 0x%02x outside a string", b)}
	case b == '"':
		if s.tokens++; s.tokens > MaxStreamStringTokens {
			return &fail{CodeTokens, fmt.Sprintf("more than %d string literals", MaxStreamStringTokens)}
		}
		s.inStr = true
	case b == '{' || b == '[':
		if s.depth == MaxStreamDepth {
			return &fail{CodeDepth, fmt.Sprintf("containers nest deeper than %d", MaxStreamDepth)}
		}
		s.arrays = s.arrays&^(1<<s.depth) | arrayBit(b)<<s.depth
		s.depth++
	case b == '}' || b == ']':
		return s.close(b)
	}
	return nil
}

// arrayBit is 1 for '[' and ']', 0 for '{' and '}': only bit 5 tells them apart.
func arrayBit(b byte) uint64 { return uint64(^b >> 5 & 1) }

func (s *scanner) close(b byte) *fail {
	if s.depth == 0 || s.arrays>>(s.depth-1)&1 != arrayBit(b) {
		return &fail{CodeBracket, fmt.Sprintf("%q does not close the innermost open container", b)}
	}
	s.depth--
	s.closed = s.depth == 0
	return nil
}

// litEffect is what scanning a whole literal does, given whether it starts inside a string:
// the string literals it opens, the open containers it closes and those it leaves open, and
// whether it ends inside a string. Applying it is equivalent to stepping the literal's bytes
// when no bound or bracket check would fail on the way; apply checks that first and
// otherwise declines.
type litEffect struct {
	tokens int
	pops   int    // containers open before the literal that it closes
	popped uint64 // their kinds as scanner.arrays bits, the outermost in bit 0
	pushes int    // containers it leaves open
	pushed uint64 // their kinds, the outermost in bit 0
	peak   int    // the most the depth rises above its value before the literal
	// lastPop: the last of the pops is the literal's last byte. If the pops empty the
	// stack, the top-level value closes there, and only there may it close.
	lastPop bool
	endIn   bool
	opens   bool // the first byte is '{', which is all the first byte of a document may be
}

// effectOf computes the effect of lit from inside or outside a string; nil if lit is not
// plain ASCII text of the kind the grammar's literals are (no whitespace, controls or
// escapes), so the byte-by-byte path must judge it.
func effectOf(lit string, inString bool) *litEffect {
	e := &litEffect{}
	in := inString
	var own []byte // the literal's own open containers
	rel := 0       // depth relative to before the literal
	for i := 0; i < len(lit); i++ {
		b := lit[i]
		switch {
		case b >= 0x7F || b <= ' ' || b == '\\':
			return nil
		case in:
			in = b != '"'
		case b == '"':
			e.tokens++
			in = true
		case b == '{' || b == '[':
			own = append(own, b)
			rel++
			e.peak = max(e.peak, rel)
		case b == '}' || b == ']':
			rel--
			if len(own) > 0 {
				if own[len(own)-1] != b-2 { // '}'-2 == '{' and ']'-2 == '['
					return nil // never true of a grammar literal; the per-byte path refuses it
				}
				own = own[:len(own)-1]
				continue
			}
			// Closes a container open before the literal: the innermost not yet closed.
			e.popped |= arrayBit(b) << e.pops
			e.pops++
			e.lastPop = i == len(lit)-1
		}
	}
	// popped holds the innermost first; store it outermost first, as arrays is laid out.
	e.popped = reverseBits(e.popped, e.pops)
	for i, b := range own {
		e.pushed |= arrayBit(b) << i
	}
	e.pushes = len(own)
	e.endIn = in
	e.opens = !inString && lit[0] == '{'
	return e
}

func reverseBits(x uint64, n int) uint64 {
	var r uint64
	for i := 0; i < n; i++ {
		r |= (x >> i & 1) << (n - 1 - i)
	}
	return r
}

// apply performs e for its literal, or returns false, changing nothing, when the
// byte-by-byte path could refuse (a bound, a bracket mismatch, the top level closing before
// the literal's last byte).
func (s *scanner) apply(e *litEffect) bool {
	if e == nil || s.closed || s.need != 0 || s.esc != 0 || !s.started && !e.opens ||
		s.tokens+e.tokens > MaxStreamStringTokens || e.pops > s.depth || s.depth+e.peak > MaxStreamDepth {
		return false
	}
	base := s.depth - e.pops // the depth once the literal has closed what it closes
	if e.pops > 0 {
		if s.arrays>>base&(1<<e.pops-1) != e.popped {
			return false
		}
		if base == 0 && (!e.lastPop || e.pushes > 0) {
			return false // the top level would close before the literal's end
		}
	}
	s.arrays = s.arrays&(1<<base-1) | e.pushed<<base
	s.depth = base + e.pushes
	s.closed = s.depth == 0
	s.tokens += e.tokens
	s.inStr = e.endIn
	s.started = true
	return true
}
