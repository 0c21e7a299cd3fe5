package stream

import (
	"slices"
	"unsafe"

	"github.com/beamagents/beamagents/interaction"
)

// Decoder decodes one stream. Use one per provider response; it is not safe for concurrent
// use. Its work is linear in the bytes pushed, however they are chunked: every byte is judged
// by the scanner and then the grammar, a bounded number of times, and the buffer only ever
// grows.
type Decoder struct {
	// buf holds the stream. It is append-only: bytes below len(buf) are never written again,
	// so string views of it (as strings.Builder makes them) stay valid and cost no copy.
	buf []byte
	// A fast run: while len(buf) < fastEnd, Push takes a byte by appending it alone when it
	// is one the run expects, since for both layers such a byte only advances a position, a
	// count or a small state: string content (a strState), the next bytes of a literal or a
	// case id (fastLit), the digits of an integer, or the digits and commas of a bytes array
	// (an elemState, with room for elemRoom more elements). The bytes taken since fastFrom are
	// added to the state of both layers by sync, before anything else reads or changes it.
	fastEnd, fastFrom int
	elemRoom          int
	fastLit           string
	escapes           int // escape characters taken in a string
	fastMode          uint8
	elem              elemState
	str               strState

	terminal bool
	frames   [4]frame // the machine's first frames, so a decoder is one allocation
	g        *Grammar
	received int // len(buf) once the buffer is released at a terminal outcome
	sc       scanner
	m        machine
	out      Outcome
	accepted terminal // the outcome of an acceptance, so that it costs no allocation
}

// NewDecoder returns a decoder at the start of a stream. It is cheap: compile the Grammar
// once per schema and create a decoder per stream.
func (g *Grammar) NewDecoder() *Decoder {
	d := &Decoder{g: g}
	d.m.frames = d.frames[:0]
	d.m.reset(g.envelope)
	return d
}

// NewDecoder compiles s's grammar and returns a decoder for one stream. Prefer
// Compile(s) once and Grammar.NewDecoder per stream.
func NewDecoder(s *interaction.Schema) (*Decoder, error) {
	g, err := Compile(s)
	if err != nil {
		return nil, err
	}
	return g.NewDecoder(), nil
}

// Push feeds the next chunk. It returns Incomplete while the bytes so far can still begin an
// admitted document, and a Refused outcome at the first byte that proves otherwise. It never
// accepts: even a complete document waits for Finish, since more bytes may follow. After a
// terminal outcome Push returns that outcome again.
func (d *Decoder) Push(chunk []byte) Outcome {
	if len(chunk) == 1 {
		// A token-by-token transport: no chunk machinery, and in a fast run nothing but the
		// append and the run's own check.
		if n := len(d.buf); n < d.fastEnd {
			b := chunk[0]
			take := false
			switch d.fastMode {
			case fastString:
				// Plain text first: it leaves the state as it is, so consecutive bytes do not
				// wait on one another's store of it.
				if plainBytes[b] && d.str == strText {
					take = true
				} else if e := strNext[d.str][b]; e != 0 {
					if d.str == strAfterBackslash {
						d.escapes++
					}
					d.str, take = e, true
				}
			case fastLiteral:
				take = b == d.fastLit[n-d.fastFrom]
			case fastDigits:
				take = b-'0' < 10
			case fastElements:
				if e := elemNext[d.elem][b]; e != 0 && (d.elem != elemStart || d.elemRoom > 0) {
					if d.elem == elemStart {
						d.elemRoom--
					}
					d.elem, take = e, true
				}
			}
			if take {
				d.buf = d.buf[:n+1]
				d.buf[n] = b
				return Outcome{}
			}
		}
		if !d.terminal && len(d.buf) < cap(d.buf) {
			return d.pushByte(chunk[0])
		}
	}
	return d.push(chunk)
}

// Fast run modes.
const (
	fastString   = iota // string content
	fastLiteral         // expected bytes: of a literal, or of a case id
	fastDigits          // further digits of an integer
	fastElements        // the elements of a bytes array
)

// strState is where string content stands in a fast run.
type strState uint8

const (
	strNone           strState = iota
	strText                    // between characters
	strAfterBackslash          // a short escape's character must follow
	strCont1                   // one UTF-8 continuation byte must follow
	strCont2                   // two must follow
)

// strNext[s][b] is the state after byte b of string content in state s, or strNone if b is
// not one a fast run takes there: plain bytes, short escapes, and the UTF-8 sequences whose
// continuation bytes may be any of 0x80..0xBF (U+0080..U+07FF, U+1000..U+CFFF and
// U+E000..U+FFFF). The rest — a quote, \u escapes, other sequences — are judged byte by byte.
var strNext = func() (t [strCont2 + 1][256]strState) {
	for b := 0; b < 256; b++ {
		switch {
		case plainBytes[b]:
			t[strText][b] = strText
		case b == '\\':
			t[strText][b] = strAfterBackslash
		case b >= 0xC2 && b <= 0xDF:
			t[strText][b] = strCont1
		case b >= 0xE1 && b <= 0xEC || b == 0xEE || b == 0xEF:
			t[strText][b] = strCont2
		case b >= 0x80 && b <= 0xBF:
			t[strCont1][b], t[strCont2][b] = strText, strCont1
		}
		if shortEscape[b] {
			t[strAfterBackslash][b] = strText
		}
	}
	return t
}()

// sync adds the bytes Push took alone to the grammar's state and ends the fast run.
func (d *Decoder) sync() {
	if d.fastEnd == 0 {
		return
	}
	m := &d.m
	k := len(d.buf) - d.fastFrom
	m.work += k
	switch d.fastMode {
	case fastString:
		// Every byte counts but an escape's character (the backslash stands for the byte).
		m.count += k - d.escapes
		switch d.str {
		case strAfterBackslash:
			d.sc.esc, m.pos = 1, strEscape
		case strCont1:
			d.sc.need, d.sc.lo, d.sc.hi = 1, 0x80, 0xBF
		case strCont2:
			d.sc.need, d.sc.lo, d.sc.hi = 2, 0x80, 0xBF
		}
	case fastLiteral:
		if o := m.cur; o.kind == opCase {
			// Narrow the case table over the bytes taken, as step would have (it charged a unit
			// per byte above; caseID charges its comparisons), the shared prefix at once.
			taken, t := d.buf[d.fastFrom:], o.cases
			if m.pos == 0 && len(t.prefix) > 0 && len(taken) >= len(t.prefix) {
				m.lo, m.hi, m.pos = t.prefixLo, t.prefixHi, len(t.prefix)
				m.work += t.prefixWork - len(t.prefix)
				taken = taken[len(t.prefix):]
			}
			for _, b := range taken {
				m.caseID(o, b) // accepted: fast planned the run along one id
			}
			break
		}
		if m.pos == 0 && k == len(m.cur.lit)-1 && d.sc.apply(d.head(m.cur)) {
			m.pos = k
			break
		}
		m.pos += k
		for _, b := range d.buf[d.fastFrom:] {
			d.sc.step(b) // accepted: fast stepped a copy of the scanner over these bytes
		}
	case fastDigits:
		for _, c := range d.buf[d.fastFrom:] {
			m.mag = m.mag*10 + uint64(c-'0')
		}
	case fastElements:
		m.count = m.cur.max - d.elemRoom
		if k > 0 {
			m.pos, m.mag, m.lead0 = bytesNext, 0, false
			if d.elem != elemStart {
				// In an element: its digits are the last bytes taken (at most three).
				m.pos, m.lead0 = bytesElem, d.elem == elemZero
				j := len(d.buf)
				for j > 0 && d.buf[j-1] >= '0' && d.buf[j-1] <= '9' {
					j--
				}
				for _, c := range d.buf[j:] {
					m.mag = m.mag*10 + uint64(c-'0')
				}
			}
		}
	}
	d.fastEnd, d.fastLit = 0, ""
}

// fast starts a fast run where one applies: in string content, within the field's bound; in
// a literal, up to its last byte, which ends the op, or a byte the scanner would refuse; along
// a case id; over the digits of an integer that cannot cross its bound; in a bytes array,
// over its digits and commas, within its bound. None takes the byte that ends an op, and all
// stop at the work bound and the buffer's capacity. Each byte a run expects is one the
// per-byte path would accept with no effect but the one sync adds.
func (d *Decoder) fast() {
	m, s := &d.m, &d.sc
	o := m.cur
	if d.terminal || m.done || s.need != 0 || s.esc != 0 || s.closed || !s.started {
		return
	}
	n := len(d.buf)
	room := min(MaxGrammarWork-m.work, cap(d.buf)-n)
	switch {
	case o.kind == opStr && m.pos == strContent && s.inStr:
		// Within the field's bound: every byte but an escape's character counts.
		d.fastMode, d.str, d.escapes, room = fastString, strText, 0, min(room, o.max-m.count)
	case o.kind == opLit:
		// Up to the literal's last byte, or the first byte the scanner would refuse from
		// here, found by stepping a copy of it — at once, from the literal's start, by its
		// precomputed effect: sync steps the real one over the bytes taken, each of which it
		// then accepts.
		j, sim := m.pos, *s
		if head := d.head(o); m.pos == 0 && len(o.lit)-1 <= room && sim.apply(head) {
			j = len(o.lit) - 1
		} else {
			for j < len(o.lit)-1 && j-m.pos < room && sim.step(o.lit[j]) == nil {
				j++
			}
		}
		if room = j - m.pos; room > 0 {
			d.fastMode, d.fastLit = fastLiteral, o.lit[m.pos:j]
		}
	case o.kind == opCase && s.inStr:
		// Along the one id the bytes so far can begin: the prefix all ids share, and then
		// the rest of the id when the prefix leaves one, or the rest of the one id left.
		t, id := o.cases, ""
		switch {
		case m.pos == 0 && len(t.prefix) > 0:
			id = t.prefix
			if t.prefixHi-t.prefixLo == 1 {
				id = t.ids[t.prefixLo]
			}
		case m.pos > 0 && m.hi-m.lo == 1:
			id = t.ids[m.lo][m.pos:]
		}
		// Bytes the scanner passes over, each costing a unit and at most a comparison beyond
		// the prefix's precomputed work.
		j := 0
		for j < len(id) && interior(id[j]) {
			j++
		}
		if room = min(room, j, (MaxGrammarWork-m.work-t.prefixWork)/2); room > 0 {
			d.fastMode, d.fastLit = fastLiteral, id[:room]
		}
	case o.kind == opInt && m.pos == intDigits && s.inStr:
		// Digits that cannot take the magnitude past its bound, whatever they are.
		limit := o.ints.posMax
		if m.neg {
			limit = o.ints.negMax
		}
		// After j more digits the magnitude is below (mag+1)·10^j, which must stay at most
		// limit+1: a further digit is safe while that bound is at most (limit+1)/10, computed
		// without overflow.
		most := limit / 10
		if limit%10 == 9 {
			most++
		}
		j := 0
		if m.mag < limit {
			for top := m.mag + 1; j < room && top <= most; j++ {
				top *= 10
			}
		}
		if room = j; room > 0 {
			d.fastMode = fastDigits
		}
	case o.kind == opBytes && m.pos != bytesOpen && !s.inStr:
		d.fastMode, d.elem, d.elemRoom = fastElements, elemOf(m), o.max-m.count
	default:
		return
	}
	if room > 0 {
		d.fastFrom, d.fastEnd = n, n+room
	}
}

// head returns the effect on the scanner of literal o but its last byte, from the scanner's
// state.
func (d *Decoder) head(o *op) *litEffect {
	if d.sc.inStr {
		return o.headInside
	}
	return o.headOutside
}

// elemState is where a bytes array's element stands, as much as the next byte's validity
// depends on: the digits seen so far, by value range.
type elemState uint8

const (
	elemNone  elemState = iota
	elemStart           // before an element's first digit
	elemZero            // 0: nothing may follow but a comma (or the closing bracket)
	elemOne             // 1: any digit may follow
	elemTwo             // 2
	elemBig             // 3 to 9
	elemLow             // 10 to 24: any digit may follow
	elem25              // 25: a digit up to 5 may follow
	elemHigh            // 26 to 99: no digit may follow
	elemThree           // three digits
)

// elemNext[e][b] is the state after byte b in state e, or elemNone if b is not a digit or
// comma machine.bytes accepts there (the closing bracket is judged byte by byte).
var elemNext = func() (t [elemThree + 1][256]elemState) {
	for e := elemZero; e <= elemThree; e++ {
		t[e][','] = elemStart
	}
	for c := byte('0'); c <= '9'; c++ {
		t[elemStart][c] = [...]elemState{elemZero, elemOne, elemTwo, elemBig, elemBig, elemBig, elemBig, elemBig, elemBig, elemBig}[c-'0']
		t[elemOne][c] = elemLow
		t[elemTwo][c] = [...]elemState{elemLow, elemLow, elemLow, elemLow, elemLow, elem25, elemHigh, elemHigh, elemHigh, elemHigh}[c-'0']
		t[elemBig][c] = elemHigh
		t[elemLow][c] = elemThree
		if c <= '5' {
			t[elem25][c] = elemThree
		}
	}
	return t
}()

// elemOf returns the element state of the machine in a bytes array past its opening bracket.
func elemOf(m *machine) elemState {
	switch v := m.mag; {
	case m.pos != bytesElem:
		return elemStart
	case m.lead0:
		return elemZero
	case v == 1:
		return elemOne
	case v == 2:
		return elemTwo
	case v < 10:
		return elemBig
	case v < 25:
		return elemLow
	case v == 25:
		return elem25
	case v < 100:
		return elemHigh
	}
	return elemThree
}

func (d *Decoder) pushByte(b byte) Outcome {
	d.sync()
	start := len(d.buf)
	d.buf = d.buf[:start+1]
	d.buf[start] = b
	if !d.quickByte(b) {
		inert := d.sc.inert(b)
		if !inert || !d.m.quickPlain(b) && (d.m.cur.kind != opBytes || !d.m.quickStep(b)) {
			if o := d.judge(b, start, inert); o.t != nil {
				return d.settle(o)
			}
		}
	}
	if k := d.m.cur.kind; k != opEnd && k != opBool {
		d.fast()
	}
	return Outcome{}
}

// quickByte takes, exactly as the scanner and then the grammar would, the bytes of string
// content beyond plain text: the start of an escape and its short escape character, and the
// bytes of a multi-byte UTF-8 sequence, within the field's bound. It reports false, changing
// nothing, for anything else.
func (d *Decoder) quickByte(b byte) bool {
	m, s := &d.m, &d.sc
	o := m.cur
	if o.kind != opStr || !s.inStr || m.done || m.work >= MaxGrammarWork {
		return false
	}
	switch {
	case m.pos == strContent && s.need != 0:
		// A continuation byte: the scanner checks its range, the grammar counts it.
		if b < s.lo || b > s.hi || m.count >= o.max {
			return false
		}
		s.need--
		s.lo, s.hi = 0x80, 0xBF
		m.count++
	case m.pos == strContent && s.esc == 0 && b >= 0xC2 && b <= 0xF4:
		if m.count >= o.max {
			return false
		}
		s.utf8(b) // a valid lead byte: sets need, lo and hi
		m.count++
	case m.pos == strContent && s.esc == 0 && b == '\\':
		if m.count >= o.max {
			return false
		}
		s.esc, m.pos = 1, strEscape
		m.count++
	case m.pos == strEscape && s.esc == 1:
		switch b {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			s.esc, m.pos = 0, strContent
		default:
			return false
		}
	default:
		return false
	}
	m.work++
	return true
}

func (d *Decoder) push(chunk []byte) Outcome {
	if d.terminal {
		return d.out
	}
	d.sync()
	start := len(d.buf)
	take := min(len(chunk), MaxStreamBytes-start)
	if start+take > cap(d.buf) && (cap(d.buf) > 0 || take < 512) {
		// Room for a stream of small chunks: from 4 KiB, fourfold, so it grows a few times at
		// most. A first chunk of some size gets exactly its room from the append instead: a
		// document pushed whole is held once, at its size.
		d.buf = slices.Grow(d.buf, min(max(start+take, 4*cap(d.buf), 4096), MaxStreamBytes)-start)
	}
	// Appending only ever writes past the bytes already held (see buf); growth leaves the old
	// array as it was.
	d.buf = append(d.buf, chunk[:take]...)
	d.buf = d.buf[:len(d.buf):min(cap(d.buf), MaxStreamBytes)] // room never past the bound
	if o := d.feed(d.view(), start); o.t != nil {
		return d.settle(o)
	}
	if take < len(chunk) {
		if d.sc.ended {
			return d.settle(refused(CodeTrailing, MaxStreamBytes, "a byte after the terminal LF"))
		}
		return d.settle(refused(CodeBytes, MaxStreamBytes, "the stream exceeds %d bytes", MaxStreamBytes))
	}
	d.fast()
	return Outcome{}
}

// view returns the buffered bytes as a string without copying them (see buf).
func (d *Decoder) view() string {
	return unsafe.String(unsafe.SliceData(d.buf), len(d.buf))
}

// Finish declares the end of the stream. It accepts only by running the whole-document
// decoder (interaction.Schema.Decode) on exactly the buffered bytes; a stream that never
// reached its terminal LF is STREAM-TRUNCATED, and a document the whole decoder refuses is
// STREAM-SEMANTIC carrying that decoder's error.
func (d *Decoder) Finish() Outcome {
	if d.terminal {
		return d.out
	}
	if !d.sc.ended {
		return d.settle(refused(CodeTruncated, len(d.buf), "the stream ended before the document's terminal LF"))
	}
	v, err := d.g.schema.DecodeString(d.view())
	if err != nil {
		o := refused(CodeSemantic, len(d.buf), "%s", err.Error())
		o.t.refusal.Cause = err
		return d.settle(o)
	}
	// The terminal is the decoder's own: an acceptance costs no allocation beyond the value.
	d.accepted = terminal{state: Accepted, value: v}
	return d.settle(Outcome{&d.accepted})
}

// Cancel closes the stream early with STREAM-CANCELLED and the given reason. It cannot undo
// a terminal outcome: after Finish accepted, Cancel returns that same acceptance.
func (d *Decoder) Cancel(reason string) Outcome {
	if d.terminal {
		return d.out
	}
	if len(reason) > 256 {
		reason = reason[:256] + "…"
	}
	return d.settle(refused(CodeCancelled, len(d.buf), "cancelled: %q", reason))
}

// settle makes o the sticky terminal outcome and releases the buffer.
func (d *Decoder) settle(o Outcome) Outcome {
	d.sync()
	d.out, d.terminal, d.received, d.buf = o, true, len(d.buf), nil
	return o
}

// Buffered returns the number of bytes received (and, until a terminal outcome, buffered).
func (d *Decoder) Buffered() int {
	if d.terminal {
		return d.received
	}
	return len(d.buf)
}

// feed runs the new bytes buf[start:] through the scanner, then the grammar: in runs where
// their result is known in advance (see run), byte by byte elsewhere.
func (d *Decoder) feed(buf string, start int) Outcome {
	for i := start; i < len(buf); i++ {
		n, o := d.run(buf, i)
		if o.t != nil {
			return o
		}
		if i += n; i == len(buf) {
			break
		}
		if o := d.byteStep(buf[i], i); o.t != nil {
			return o
		}
	}
	return Outcome{}
}

// byteStep judges the byte b at offset i: the scanner first, then the grammar.
func (d *Decoder) byteStep(b byte, i int) Outcome {
	inert := d.sc.inert(b)
	if inert && d.m.quickPlain(b) {
		return Outcome{}
	}
	return d.judge(b, i, inert)
}

// judge is byteStep past its quickest transitions; inert is the scanner's verdict that b
// changes nothing for it.
func (d *Decoder) judge(b byte, i int, inert bool) Outcome {
	if !inert {
		if f := d.sc.step(b); f != nil {
			return refused(f.code, i, "%s", f.msg)
		}
	}
	if !d.m.quickStep(b) {
		if msg := d.m.step(b); msg != "" {
			return refused(CodeGrammar, i, "%s", msg)
		}
	}
	return Outcome{}
}
