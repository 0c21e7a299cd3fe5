package stream

import (
	"math/bits"
	"unicode/utf8"

	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/swar"
)

// Runs are feed's shortcuts: whole ops, or the longest safe part of one, taken at once
// instead of byte by byte. A run consumes only bytes whose per-byte result it knows — both
// layers accept them and it leaves both in the state the per-byte path would — and charges the
// same grammar work; where a byte could be refused it either stops short of it, leaving it to
// the per-byte path, or judges it with the same layer calls in the same order (scanner first).
// So outcomes, offsets, messages and work never depend on whether a run was taken, which
// depends on chunk boundaries.

// run takes ops from buf[i:] for as long as runs apply, and returns the bytes consumed, or
// the refusal of a byte it judged.
func (d *Decoder) run(buf string, i int) (int, Outcome) {
	start := i
	m, s := &d.m, &d.sc
	// A byte in the middle of a UTF-8 sequence or an escape, or past the top-level value, is
	// the per-byte path's.
	for i < len(buf) && !s.closed && s.need == 0 && s.esc == 0 && !m.done {
		var n int
		var o Outcome
		switch op := m.cur; op.kind {
		case opLit:
			// The common case inline: the whole literal is present and equal, and its effect on
			// the scanner is known.
			if k := len(op.lit); m.pos == 0 && len(buf)-i >= k && buf[i:i+k] == op.lit && m.work+k <= MaxGrammarWork {
				e := op.outside
				if s.inStr {
					e = op.inside
				}
				if s.apply(e) {
					m.work += k
					if i += k; !m.next() {
						if msg := m.advance(); msg != "" {
							return 0, refused(CodeGrammar, i-1, "%s", msg)
						}
					}
					continue
				}
			}
			n, o = d.literalRun(op, buf, i)
		case opStr:
			n, o = d.stringRun(op, buf, i)
		case opBytes:
			n, o = d.bytesRun(op, buf, i)
		case opInt:
			n, o = d.intRun(op, buf, i)
		case opCase:
			n, o = d.caseRun(op, buf, i)
		}
		if o.t != nil {
			return 0, o
		}
		if n == 0 {
			break
		}
		i += n
	}
	return i - start, Outcome{}
}

// literalRun takes the bytes of a literal that are present and equal one at a time through
// the scanner, when run cannot take the literal whole (it is split across chunks, or a bound
// or bracket check might fail in it): linear however the literal is split, it stops before
// the first byte that differs, which the per-byte path refuses.
func (d *Decoder) literalRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	rest := o.lit[m.pos:]
	n := 0
	for n < len(rest) && i+n < len(buf) && buf[i+n] == rest[n] && m.work < MaxGrammarWork {
		if f := d.sc.step(rest[n]); f != nil {
			return 0, refused(f.code, i+n, "%s", f.msg)
		}
		m.work++
		n++
	}
	if m.pos += n; m.pos == len(o.lit) {
		if msg := m.advance(); msg != "" {
			return 0, refused(CodeGrammar, i+n-1, "%s", msg)
		}
	}
	return n, Outcome{}
}

// stringRun consumes string content whose per-byte result is known — plain ASCII, complete
// valid UTF-8 sequences and complete canonical escapes, which the scanner accepts and the
// grammar only counts, within the field's bound — and the closing quote.
func (d *Decoder) stringRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	if m.pos != strContent || !d.sc.inStr || m.work+len(buf)-i > MaxGrammarWork {
		return 0, Outcome{}
	}
	room := o.max - m.count // decoded bytes the field still admits
	n := i
	for {
		// Plain bytes, eight at a time, then one at a time up to the bound or the buffer's end.
		from, lim := n, min(len(buf), n+room)
	plain:
		for {
			switch {
			case n+8 <= lim:
				if sp := special(swar.Load64(buf[n:])); sp != 0 {
					n += bits.TrailingZeros64(sp) >> 3
					break plain
				}
				n += 8
			case n < lim && plainBytes[buf[n]]:
				n++
			default:
				break plain
			}
		}
		room -= n - from
		if n == len(buf) {
			break
		}
		// A unit: the closing quote, an escape or a multi-byte UTF-8 sequence.
		c := buf[n]
		if c == '"' {
			m.count, m.work = o.max-room, m.work+n+1-i
			d.sc.inStr = false
			if msg := m.advance(); msg != "" {
				return 0, refused(CodeGrammar, n, "%s", msg)
			}
			return n + 1 - i, Outcome{}
		}
		w, counts := 0, 1 // an escape decodes to one byte
		switch {
		case c == '\\':
			if n+1 < len(buf) && shortEscape[buf[n+1]] {
				w = 2
			} else {
				_, w = canonjson.CanonicalEscape(buf[n:])
			}
		case c >= 0xE1 && c <= 0xEC && n+2 < len(buf):
			// The commonest three-byte sequences (U+1000 to U+CFFF), inline.
			if c1, c2 := buf[n+1], buf[n+2]; c1 >= 0x80 && c1 <= 0xBF && c2 >= 0x80 && c2 <= 0xBF {
				w = 3
			}
			counts = w // every byte of a UTF-8 sequence counts
		case c >= 0x80:
			w = utf8Len(buf[n:])
			counts = w
		}
		if w == 0 || counts > room {
			break
		}
		n, room = n+w, room-counts
	}
	m.count, m.work = o.max-room, m.work+n-i
	return n - i, Outcome{}
}

// shortEscape marks the characters of the short escapes both layers accept after '\\'.
var shortEscape = func() (t [256]bool) {
	for _, c := range `"\\bfnrt` {
		t[c] = true
	}
	return t
}()

// special flags, in the high bit of each byte of w, a byte below 0x20, a quote, a backslash
// or a byte of 0x80 and above. Borrows can flag bytes above a flagged one, never below it, so
// the lowest flag is exact.
func special(w uint64) uint64 {
	quote, backslash := w^(ones*'"'), w^(ones*'\\')
	return ((w - ones*0x20) | (quote-ones)&^quote | (backslash-ones)&^backslash | w) & highs
}

// plainBytes marks the bytes 0x20..0x7F other than '"' and '\\': inside a string, the scanner
// passes them over and the grammar only counts them.
var plainBytes = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

func load32(s string, n int) uint32 {
	s = s[n : n+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// utf8Len returns the length of the complete valid multi-byte UTF-8 sequence at the start of
// p, or 0.
func utf8Len(p string) int {
	if r, w := utf8.DecodeRuneInString(p); r != utf8.RuneError || w > 1 {
		return w
	}
	return 0
}

// bytesRun consumes a bytes array: its brackets through the scanner, and its elements —
// in which the scanner has nothing to check — whole, four bytes at a time, stopping at any
// byte the grammar might refuse.
func (d *Decoder) bytesRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	if d.sc.inStr || m.work+len(buf)-i > MaxGrammarWork {
		return 0, Outcome{}
	}
	n := i
	if m.pos == bytesOpen {
		if buf[n] != '[' {
			return 0, Outcome{}
		}
		if f := d.sc.step('['); f != nil {
			return 0, refused(f.code, n, "%s", f.msg)
		}
		m.pos, n = bytesFirst, n+1
	}
	// Eight bytes at a time, as many whole elements with their commas as they hold.
	for m.pos != bytesElem && n+8 <= len(buf) {
		k, elems := elements(swar.Load64(buf[n:]))
		if k == 0 || m.count+elems > o.max {
			break
		}
		m.count += elems
		m.pos, n = bytesNext, n+k
	}
	// Whole elements and their comma, one at a time: 1 to 3 digits, no leading zero, at most 255.
	for m.pos != bytesElem && n+4 <= len(buf) && m.count < o.max {
		w := load32(buf, n)
		x := w - 0x30303030
		// The high bit of each byte flags a non-digit; the lowest flag is exact (see plainSpan).
		k := bits.TrailingZeros32(((x+0x76767676)|x)&0x80808080) >> 3
		if k == 0 || k == 4 || k > 1 && x&0xFF == 0 {
			break
		}
		y := (x & (1<<(8*k) - 1)) << (8 * (3 - k)) // the digits, the last one in byte 2
		v := (y&0xFF)*100 + (y>>8&0xFF)*10 + y>>16&0xFF
		if v > 255 {
			break
		}
		m.count++
		if byte(w>>(8*k)) != ',' {
			m.mag, m.pos, m.lead0 = uint64(v), bytesElem, k == 1 && v == 0
			n += k
			break
		}
		m.pos, n = bytesNext, n+k+1
	}
	// The rest byte by byte, as machine.bytes takes digits and commas.
	for ; n < len(buf); n++ {
		c := buf[n]
		digit := c >= '0' && c <= '9'
		switch {
		case digit && m.pos != bytesElem && m.count < o.max:
			m.count++
			m.mag, m.pos, m.lead0 = uint64(c-'0'), bytesElem, c == '0'
		case digit && m.pos == bytesElem && !m.lead0 && m.mag*10+uint64(c-'0') <= 255:
			m.mag = m.mag*10 + uint64(c-'0')
		case c == ',' && m.pos == bytesElem:
			m.pos = bytesNext
		default:
			goto end
		}
	}
end:
	m.work += n - i
	if n < len(buf) && buf[n] == ']' && (m.pos == bytesFirst || m.pos == bytesElem) {
		if f := d.sc.step(']'); f != nil {
			return 0, refused(f.code, n, "%s", f.msg)
		}
		m.work++
		if msg := m.advance(); msg != "" {
			return 0, refused(CodeGrammar, n, "%s", msg)
		}
		n++
	}
	return n - i, Outcome{}
}

// Exact per-byte comparisons on eight bytes: the high bit of each byte of the result is the
// answer for that byte. No borrow or carry crosses a byte.
const ones, highs, lows = swar.Ones, swar.High, 0x7F7F7F7F7F7F7F7F

// atLeast flags the bytes below 0x80 that are at least c (c <= 0x80).
func atLeast(w uint64, c byte) uint64 { return ((w | highs) - ones*uint64(c)) &^ w & highs }

// equal flags the bytes equal to c.
func equal(w uint64, c byte) uint64 {
	z := w ^ ones*uint64(c)
	return ^((z&lows + lows) | z) & highs
}

// elements validates the canonical bytes-array elements at the start of w (little-endian
// bytes) that end within it, each with its comma: it returns the bytes they take up to and
// including the last comma, and how many there are, or 0 if any of them is not a canonical
// byte (1 to 3 digits, no leading zero, at most 255), which the byte-by-byte path judges.
func elements(w uint64) (int, int) {
	commas := equal(w, ',')
	if commas == 0 {
		return 0, 0
	}
	last := (63 - bits.LeadingZeros64(commas)) >> 3 // the byte of the last comma
	span := uint64(highs)
	if last < 7 {
		span = highs & (1<<(8*last+8) - 1)
	}
	digits := atLeast(w, '0') &^ atLeast(w, '9'+1)
	starts := (commas<<8 | 0x80) & span // the first byte of each element
	zeros := equal(w, '0')
	three := starts & (digits >> 8) & (digits >> 16) // elements of three digits
	over := three & (atLeast(w, '3') | equal(w, '2')&(atLeast(w, '6')>>8|(equal(w, '5')>>8)&(atLeast(w, '6')>>16)))
	bad := span&^(digits|commas) | // a byte neither a digit nor a comma
		starts&commas | // an empty element
		digits&(digits<<8)&(digits<<16)&(digits<<24) | // a fourth digit
		starts&zeros&(digits>>8) | // a leading zero
		over // more than 255
	if bad&span != 0 {
		return 0, 0
	}
	return last + 1, bits.OnesCount64(commas)
}

// intRun consumes an integer's digits and its closing quote. When they are all present and
// within the field's bounds it takes them at once; otherwise it feeds them one at a time to
// the grammar, which judges each exactly as step would, refusals included (the scanner has
// nothing to check in them).
func (d *Decoder) intRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	if !d.sc.inStr {
		return 0, Outcome{}
	}
	if m.pos == intFirst {
		if k := wholeInt(o, buf[i:]); k > 0 && m.work+k <= MaxGrammarWork {
			d.sc.inStr = false
			m.work += k
			if msg := m.advance(); msg != "" {
				return 0, refused(CodeGrammar, i+k-1, "%s", msg)
			}
			return k, Outcome{}
		}
	}
	n := i
	for ; n < len(buf) && m.work < MaxGrammarWork; n++ {
		b := buf[n]
		if b == '"' {
			d.sc.inStr = false
		} else if !interior(b) {
			break
		}
		m.work++
		if msg := m.integer(o, b); msg != "" {
			return 0, refused(CodeGrammar, n, "%s", msg)
		}
		if b == '"' {
			return n + 1 - i, Outcome{}
		}
	}
	return n - i, Outcome{}
}

// wholeInt reads a canonical decimal within o's bounds and its closing quote at the start of
// p, as machine.integer admits them from intFirst, and returns their length, or 0 if they are
// not all present or integer would refuse a byte of them. A magnitude only grows digit by
// digit, so no prefix crosses a bound the whole does not.
func wholeInt(o *op, p string) int {
	ib := &o.ints
	j, neg := 0, false
	if len(p) > 0 && p[0] == '-' {
		if !ib.negOK {
			return 0
		}
		j, neg = 1, true
	}
	start := j
	var mag uint64
	for ; j < len(p) && j-start < 20 && p[j] >= '0' && p[j] <= '9'; j++ {
		mag = mag*10 + uint64(p[j]-'0') // 19 digits cannot overflow; the 20th is checked below
	}
	digits := j - start
	switch {
	case j == len(p) || p[j] != '"' || digits == 0:
		return 0
	case p[start] == '0':
		if digits > 1 || neg || !ib.zeroOK {
			return 0
		}
	case digits == 20 && (p[start] > '1' || mag < 10_000_000_000_000_000_000): // wrapped past 2^64-1
		return 0
	case neg && (mag < ib.negMin || mag > ib.negMax), !neg && (!ib.posOK || mag < ib.posMin || mag > ib.posMax):
		return 0
	}
	return j + 1
}

// caseRun consumes a case id: the prefix all ids share at once (its narrowing is
// precomputed), then byte by byte through the grammar until one id is left, then the rest of
// that id at once, and the closing quote, which selects the case.
func (d *Decoder) caseRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	t := o.cases
	if !d.sc.inStr {
		return 0, Outcome{}
	}
	n := i
	if m.pos == 0 && len(t.prefix) > 0 && len(buf)-n >= len(t.prefix) && buf[n:n+len(t.prefix)] == t.prefix &&
		m.work+t.prefixWork <= MaxGrammarWork {
		m.lo, m.hi, m.pos = t.prefixLo, t.prefixHi, len(t.prefix)
		m.work += t.prefixWork
		n += len(t.prefix)
	}
	for n < len(buf) && m.work < MaxGrammarWork {
		b := buf[n]
		if m.pos > 0 && m.hi-m.lo == 1 && b != '"' {
			// One candidate left: each of its remaining bytes costs a unit and a comparison.
			id := t.ids[m.lo][m.pos:]
			k, most := 0, min(len(id), len(buf)-n, (MaxGrammarWork-m.work)/2)
			for k < most && buf[n+k] == id[k] && interior(id[k]) {
				k++
			}
			if k == 0 {
				break
			}
			m.pos, m.work, n = m.pos+k, m.work+2*k, n+k
			continue
		}
		if b == '"' {
			d.sc.inStr = false
		} else if !interior(b) {
			break
		}
		m.work++
		if msg := m.caseID(o, b); msg != "" {
			return 0, refused(CodeGrammar, n, "%s", msg)
		}
		if n++; b == '"' {
			break
		}
	}
	return n - i, Outcome{}
}
