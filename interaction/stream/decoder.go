package stream

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction"
)

// Decoder decodes one stream. Use one per provider response; it is not safe for concurrent
// use. Its work is linear in the bytes pushed, however they are chunked: every byte goes
// through the scanner and the grammar exactly once, and the buffer only ever grows.
type Decoder struct {
	frames   [8]frame // the machine's first frames, so a decoder is one allocation
	g        *Grammar
	buf      []byte
	received int
	sc       scanner
	m        machine
	out      Outcome
	terminal bool
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
	if d.terminal {
		return d.out
	}
	start := len(d.buf)
	take := min(len(chunk), MaxStreamBytes-start)
	if cap(d.buf)-start < take {
		d.grow(take)
	}
	d.buf = d.buf[:start+take]
	if take == 1 {
		d.buf[start] = chunk[0]
	} else {
		copy(d.buf[start:], chunk[:take])
	}
	d.received = start + take
	if o := d.feed(start); o.state == Refused {
		return d.settle(o)
	}
	if take < len(chunk) {
		if d.sc.ended {
			return d.settle(refused(CodeTrailing, MaxStreamBytes, "a byte after the terminal LF"))
		}
		return d.settle(refused(CodeBytes, MaxStreamBytes, "the stream exceeds %d bytes", MaxStreamBytes))
	}
	return Outcome{}
}

// grow makes room for n more bytes, at least doubling, never past MaxStreamBytes.
func (d *Decoder) grow(n int) {
	c := min(max(2*cap(d.buf), len(d.buf)+n, 1024), MaxStreamBytes)
	buf := make([]byte, len(d.buf), c)
	copy(buf, d.buf)
	d.buf = buf
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
	v, err := d.g.schema.Decode(d.buf)
	if err != nil {
		o := refused(CodeSemantic, len(d.buf), "%s", err.Error())
		o.refusal.Cause = err
		return d.settle(o)
	}
	return d.settle(Outcome{state: Accepted, value: v})
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
	d.out, d.terminal, d.buf = o, true, nil
	return o
}

// Buffered returns the number of bytes received (and, until a terminal outcome, buffered).
func (d *Decoder) Buffered() int { return d.received }

// GrammarWork returns the grammar's work so far: one unit per byte plus one per case-table
// comparison. It is bounded by MaxGrammarWork.
func (d *Decoder) GrammarWork() int { return d.m.work }

// Category is what the grammar expects next.
type Category uint8

// Categories.
const (
	ExpectNothing Category = iota // the decoder is terminal, or only Finish remains
	ExpectLiteral                 // fixed bytes: envelope, braces, keys
	ExpectCase                    // a case id of a variant
	ExpectBool
	ExpectInteger
	ExpectString
	ExpectBytes
	ExpectEnd // the terminal LF
)

var categoryNames = [...]string{"nothing", "literal", "case", "bool", "integer", "string", "bytes", "end"}

func (c Category) String() string { return categoryNames[c] }

// Expected is what the grammar expects next and, for a field's value, which field.
type Expected struct {
	Next  Category
	Field *interaction.Field
}

// Expected returns what the grammar expects next.
func (d *Decoder) Expected() Expected {
	if d.terminal || d.m.done {
		return Expected{}
	}
	o := d.m.cur
	e := Expected{Field: o.field}
	switch o.kind {
	case opLit:
		e.Next = ExpectLiteral
	case opCase:
		e.Next = ExpectCase
	case opBool:
		e.Next = ExpectBool
	case opInt:
		e.Next = ExpectInteger
	case opStr:
		e.Next = ExpectString
	case opBytes:
		e.Next = ExpectBytes
	case opEnd:
		e.Next = ExpectEnd
	}
	return e
}

// feed runs the new bytes d.buf[start:] through the scanner, then the grammar, byte by byte.
// Three shortcuts take whole runs at once where the per-byte result is known in advance:
// plain ASCII string content, a literal that is wholly present and equal, and the digits and
// commas of a bytes array. Each stops short of any byte the per-byte path might refuse, so
// outcomes and offsets are the per-byte ones.
func (d *Decoder) feed(start int) Outcome {
	buf := d.buf
	for i := start; i < len(buf); {
		// Below a few bytes a run costs more to attempt than it saves.
		if !d.m.done && len(buf)-i >= 8 {
			n := 0
			var o Outcome
			switch op := d.m.cur; op.kind {
			case opStr:
				n = d.stringRun(op, buf[i:])
			case opLit:
				n, o = d.literalRun(op, buf, i)
			case opBytes:
				n = d.bytesRun(op, buf[i:])
			}
			if o.state == Refused {
				return o
			}
			if n > 0 {
				i += n
				continue
			}
		}
		b := buf[i]
		if d.sc.inert(b) {
			d.sc.n++
		} else if f := d.sc.step(b); f != nil {
			return refused(f.code, i, "%s", f.msg)
		}
		if !d.m.quickStep(b) {
			if msg := d.m.step(b); msg != "" {
				return refused(CodeGrammar, i, "%s", msg)
			}
		}
		i++
	}
	return Outcome{}
}

// stringRun consumes string content whose per-byte result is known: plain ASCII, complete
// valid UTF-8 sequences and complete short escapes, which the scanner accepts and the grammar
// only counts, within the field's bound and the work bound.
func (d *Decoder) stringRun(o *op, p []byte) int {
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
	d.sc.n += n
	return n
}

// unitAt returns the length of the complete short escape or valid multi-byte UTF-8 sequence
// at the start of p, or 0.
func (d *Decoder) unitAt(p []byte) int {
	if len(p) >= 2 && p[0] == '\\' {
		switch p[1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
			return 2
		}
		return 0
	}
	if len(p) > 0 && p[0] >= 0x80 {
		if r, w := utf8.DecodeRune(p); r != utf8.RuneError || w > 1 {
			return w
		}
	}
	return 0
}

// plainPrefix returns the length of the longest prefix of p made of bytes 0x20..0x7F other
// than '"' and '\\', eight bytes at a time.
func plainPrefix(p []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	n := 0
	for ; n+8 <= len(p); n += 8 {
		w := binary.LittleEndian.Uint64(p[n:])
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
func (d *Decoder) literalRun(o *op, buf []byte, i int) (int, Outcome) {
	rest := o.lit[d.m.pos:]
	if len(buf)-i < len(rest) || string(buf[i:i+len(rest)]) != rest || d.m.work+len(rest) > MaxGrammarWork {
		return 0, Outcome{}
	}
	effect := o.outside
	if d.sc.inStr {
		effect = o.inside
	}
	if d.m.pos != 0 || !d.sc.apply(effect, len(rest)) {
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
func (d *Decoder) bytesRun(o *op, p []byte) int {
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
	d.sc.n += n
	return n
}
