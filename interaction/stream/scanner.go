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
	stack   [MaxStreamDepth]byte
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
		s.stack[s.depth] = b
		s.depth++
	case b == '}' || b == ']':
		return s.close(b)
	}
	return nil
}

func (s *scanner) close(b byte) *fail {
	open := byte('{')
	if b == ']' {
		open = '['
	}
	if s.depth == 0 || s.stack[s.depth-1] != open {
		return &fail{CodeBracket, fmt.Sprintf("%q does not close the innermost open container", b)}
	}
	s.depth--
	s.closed = s.depth == 0
	return nil
}

// litEffect is what scanning a whole literal does, given whether it starts inside a string:
// the string literals it opens, its brackets in order, and whether it ends inside a string.
// Applying it is equivalent to stepping the literal's bytes when no bound or bracket check
// would fail on the way; apply checks that first and otherwise declines.
type litEffect struct {
	tokens   int
	brackets []byte
	endIn    bool
	closes   bool // the last byte is a bracket (so the top level may close on it, and only there)
	opens    bool // the first byte is '{', which is all the first byte of a document may be
}

// effectOf computes the effect of lit from inside or outside a string; nil if lit is not
// plain ASCII text of the kind the grammar's literals are (no whitespace, controls or
// escapes), so the byte-by-byte path must judge it.
func effectOf(lit string, inString bool) *litEffect {
	e := &litEffect{}
	in := inString
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
		case b == '{' || b == '[' || b == '}' || b == ']':
			e.brackets = append(e.brackets, b)
		}
	}
	last := lit[len(lit)-1]
	e.endIn = in
	e.closes = !in && (last == '}' || last == ']')
	e.opens = !inString && lit[0] == '{'
	return e
}

// apply performs e for its literal, or returns false, changing nothing, when the
// byte-by-byte path could refuse (a bound, a bracket mismatch, the top level closing before
// the literal's last byte).
func (s *scanner) apply(e *litEffect) bool {
	if e == nil || s.closed || s.need != 0 || s.esc != 0 || !s.started && !e.opens ||
		s.tokens+e.tokens > MaxStreamStringTokens || len(e.brackets) > 8 {
		return false
	}
	var pushed [8]byte
	np, depth := 0, s.depth
	for i, b := range e.brackets {
		if b == '{' || b == '[' {
			if depth == MaxStreamDepth {
				return false
			}
			pushed[np], np, depth = b, np+1, depth+1
			continue
		}
		var top byte
		switch {
		case np > 0:
			np--
			top = pushed[np]
		case depth > 0:
			top = s.stack[depth-1]
		}
		if top != b-2 { // '}'-2 == '{' and ']'-2 == '['
			return false
		}
		if depth--; depth == 0 && !(i == len(e.brackets)-1 && e.closes) {
			return false
		}
	}
	for _, b := range e.brackets {
		if b == '{' || b == '[' {
			s.stack[s.depth] = b
			s.depth++
		} else {
			s.depth--
		}
	}
	s.closed = s.depth == 0
	s.tokens += e.tokens
	s.inStr = e.endIn
	s.started = true
	return true
}
