package stream

import (
	"math/bits"
	"unicode/utf8"
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
	for i < len(buf) {
		// A byte in the middle of a UTF-8 sequence or an escape, or past the top-level value,
		// is the per-byte path's.
		if s := &d.sc; s.closed || s.need != 0 || s.esc != 0 || d.m.done {
			break
		}
		var n int
		var o Outcome
		switch op := d.m.cur; op.kind {
		case opLit:
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

// literalRun consumes the rest of a literal when all of it is present and equal: the grammar
// result is known, and the scanner's is the literal's precomputed effect. Otherwise it takes
// the matching bytes one at a time through the scanner (linear however the literal is split),
// stopping before the first byte that differs, which the per-byte path refuses.
func (d *Decoder) literalRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	rest := o.lit[m.pos:]
	if m.pos == 0 && len(buf)-i >= len(rest) && buf[i:i+len(rest)] == rest && m.work+len(rest) <= MaxGrammarWork {
		effect := o.outside
		if d.sc.inStr {
			effect = o.inside
		}
		if d.sc.apply(effect) {
			m.work += len(rest)
			if msg := m.advance(); msg != "" {
				return 0, refused(CodeGrammar, i+len(rest)-1, "%s", msg)
			}
			return len(rest), Outcome{}
		}
	}
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
	for n < len(buf) {
		end := plainSpan(buf, n, min(len(buf), n+room))
		room -= end - n
		if n = end; n == len(buf) {
			break
		}
		c := buf[n]
		if c == '"' {
			m.count, m.work = o.max-room, m.work+n+1-i
			d.sc.inStr = false
			if msg := m.advance(); msg != "" {
				return 0, refused(CodeGrammar, n, "%s", msg)
			}
			return n + 1 - i, Outcome{}
		}
		w, counts := 0, 0
		switch {
		case c == '\\':
			w, counts = escapeLen(buf[n:]), 1 // an escape decodes to one byte
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

// plainBytes marks the bytes 0x20..0x7F other than '"' and '\\': inside a string, the scanner
// passes them over and the grammar only counts them.
var plainBytes = func() (t [256]bool) {
	for b := 0x20; b < 0x80; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// plainSpan returns the end of the run of plain bytes starting at s[n], at most lim, eight
// bytes at a time.
func plainSpan(s string, n, lim int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; n+8 <= lim; n += 8 {
		w := load64(s, n)
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		// Each term flags, in its high bit, a byte below 0x20, a quote, a backslash or a byte
		// of 0x80 and above. Borrows can flag bytes above a flagged one, never below it, so the
		// lowest flag is exact.
		special := ((w - ones*0x20) | (quote-ones)&^quote | (backslash-ones)&^backslash | w) & highs
		if special != 0 {
			return n + bits.TrailingZeros64(special)>>3
		}
	}
	for n < lim && plainBytes[s[n]] {
		n++
	}
	return n
}

func load64(s string, n int) uint64 {
	s = s[n : n+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string, n int) uint32 {
	s = s[n : n+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// escapeLen returns the length of the complete canonical escape at the start of p (a short
// escape, or \u00XX for a control character without one), which both layers accept, or 0.
func escapeLen(p string) int {
	if len(p) < 2 {
		return 0
	}
	switch p[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(p) < 6 || p[2] != '0' || p[3] != '0' || p[4] != '0' && p[4] != '1' {
			return 0
		}
		lo := p[5]
		if !(lo >= '0' && lo <= '9' || lo >= 'a' && lo <= 'f') {
			return 0
		}
		if c := (p[4]-'0')<<4 | hexValue(lo); c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r' {
			return 0
		}
		return 6
	}
	return 0
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
	// Whole elements and their comma: 1 to 3 digits, no leading zero, at most 255.
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

// intRun consumes the digits of an integer through the grammar, which judges each exactly as
// step would, refusals included (the scanner has nothing to check in them), and its closing
// quote.
func (d *Decoder) intRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	if !d.sc.inStr {
		return 0, Outcome{}
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
