package stream

import "unicode/utf8"

// Runs are shortcuts through feed: spans of bytes whose per-byte result is known in advance,
// taken at once. Each stops short of any byte the per-byte path might refuse, and charges
// the same grammar work, so outcomes, offsets and work never depend on whether a run was
// taken (which depends on chunk boundaries).

// stringRun consumes string content whose per-byte result is known: plain ASCII, complete
// valid UTF-8 sequences and complete short escapes, which the scanner accepts and the grammar
// only counts, within the field's bound and the work bound.
func (d *Decoder) stringRun(o *op, p string) int {
	if d.m.pos != strContent || !d.sc.inStr || d.sc.esc != 0 || d.sc.need != 0 {
		return 0
	}
	m := &d.m
	n := 0
	for {
		limit := min(len(p)-n, o.max-m.count, MaxGrammarWork-m.work)
		k := plainPrefix(p[n : n+limit])
		n, m.count, m.work = n+k, m.count+k, m.work+k
		if k < limit {
			if w := d.unitAt(p[n:]); w > 0 && m.count < o.max && m.work+w <= MaxGrammarWork {
				n, m.count, m.work = n+w, m.count+1, m.work+w
				if p[n-w] >= 0x80 {
					m.count += w - 1 // every byte of a UTF-8 sequence counts
					if m.count > o.max {
						n, m.count, m.work = n-w, m.count-w, m.work-w
						break
					}
				}
				continue
			}
		}
		break
	}
	return n
}

// unitAt returns the length of the complete short escape or valid multi-byte UTF-8 sequence
// at the start of p, or 0.
func (d *Decoder) unitAt(p string) int {
	if len(p) >= 2 && p[0] == '\\' {
		switch p[1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			return 2
		}
		return 0
	}
	if len(p) > 0 && p[0] >= 0x80 {
		if r, w := utf8.DecodeRuneInString(p); r != utf8.RuneError || w > 1 {
			return w
		}
	}
	return 0
}

// plainPrefix returns the length of the longest prefix of p made of bytes 0x20..0x7F other
// than '"' and '\\', eight bytes at a time.
func plainPrefix(p string) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; n+8 <= len(p); n += 8 {
		w := uint64(p[n]) | uint64(p[n+1])<<8 | uint64(p[n+2])<<16 | uint64(p[n+3])<<24 |
			uint64(p[n+4])<<32 | uint64(p[n+5])<<40 | uint64(p[n+6])<<48 | uint64(p[n+7])<<56
		quote, backslash := w^(ones*'"'), w^(ones*'\\')
		special := (w - ones*0x20) | (quote-ones)&^quote | (backslash-ones)&^backslash | w
		if special&highs != 0 {
			break
		}
	}
	for ; n < len(p); n++ {
		if c := p[n]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			break
		}
	}
	return n
}

// literalRun consumes the rest of a literal when all of it is present and equal: the grammar
// result is known, and the scanner checks the bytes alone.
func (d *Decoder) literalRun(o *op, buf string, i int) (int, Outcome) {
	rest := o.lit[d.m.pos:]
	if len(buf)-i < len(rest) || buf[i:i+len(rest)] != rest || d.m.work+len(rest) > MaxGrammarWork {
		return 0, Outcome{}
	}
	effect := o.outside
	if d.sc.inStr {
		effect = o.inside
	}
	if d.m.pos != 0 || !d.sc.apply(effect) {
		for j := 0; j < len(rest); j++ {
			if f := d.sc.step(rest[j]); f != nil {
				return 0, refused(f.code, i+j, "%s", f.msg)
			}
		}
	}
	d.m.work += len(rest)
	d.m.pos = len(o.lit)
	if msg := d.m.advance(); msg != "" {
		return 0, refused(CodeGrammar, i+len(rest)-1, "%s", msg)
	}
	return len(rest), Outcome{}
}

// bytesRun consumes the digits and commas of a bytes array, which the scanner has nothing to
// check in; it stops at ']' and at any byte the grammar would refuse.
func (d *Decoder) bytesRun(o *op, p string) int {
	m := &d.m
	if m.pos == bytesOpen || d.sc.inStr || d.sc.need != 0 {
		return 0
	}
	limit := min(len(p), MaxGrammarWork-m.work)
	n := 0
loop:
	for ; n < limit; n++ {
		c := p[n]
		switch {
		case c >= '0' && c <= '9' && m.pos != bytesElem:
			if m.count == o.max {
				break loop
			}
			m.count++
			m.mag, m.pos, m.lead0 = uint64(c-'0'), bytesElem, c == '0'
		case c >= '0' && c <= '9':
			if v := m.mag*10 + uint64(c-'0'); !m.lead0 && v <= 255 {
				m.mag = v
				continue
			}
			break loop
		case c == ',' && m.pos == bytesElem:
			m.pos = bytesNext
		default:
			break loop
		}
	}
	m.work += n
	return n
}

// interiorRun consumes the plain bytes inside the quotes of an integer or a case id: the
// scanner has nothing to check in them and the grammar judges each exactly as step would,
// refusals included (those bytes never end the op: only the closing quote does).
func (d *Decoder) interiorRun(o *op, buf string, i int) (int, Outcome) {
	m := &d.m
	if !d.sc.inStr || d.sc.esc != 0 || d.sc.need != 0 {
		return 0, Outcome{}
	}
	n := 0
	for ; i+n < len(buf); n++ {
		b := buf[i+n]
		if b < 0x20 || b >= 0x7F || b == '"' || b == '\\' || m.work >= MaxGrammarWork {
			break
		}
		m.work++
		var msg string
		if o.kind == opInt {
			msg = m.integer(o, b)
		} else {
			msg = m.caseID(o, b)
		}
		if msg != "" {
			return 0, refused(CodeGrammar, i+n, "%s", msg)
		}
	}
	return n, Outcome{}
}
