package stream

import (
	"unsafe"

	"github.com/beamagents/beamagents/interaction"
)

// Decoder decodes one stream. Use one per provider response; it is not safe for concurrent
// use. Its work is linear in the bytes pushed, however they are chunked: every byte is judged
// once by the scanner and then the grammar, and the buffer only ever grows.
type Decoder struct {
	frames [8]frame // the machine's first frames, so a decoder is one allocation
	g      *Grammar
	// buf holds the stream. It is append-only: bytes below len(buf) are never written again,
	// so string views of it (as strings.Builder makes them) stay valid and cost no copy.
	buf      []byte
	received int // len(buf) once the buffer is released at a terminal outcome
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
	if len(chunk) == 1 && !d.terminal && len(d.buf) < cap(d.buf) {
		return d.pushByte(chunk[0]) // a token-by-token transport: no chunk machinery
	}
	return d.push(chunk)
}

func (d *Decoder) pushByte(b byte) Outcome {
	start := len(d.buf)
	d.buf = d.buf[:start+1]
	d.buf[start] = b
	inert := d.sc.inert(b)
	if inert && (d.m.quickPlain(b) || d.m.cur.kind == opBytes && d.m.quickStep(b)) {
		return Outcome{}
	}
	if o := d.judge(b, start, inert); o.t != nil {
		return d.settle(o)
	}
	return Outcome{}
}

func (d *Decoder) push(chunk []byte) Outcome {
	if d.terminal {
		return d.out
	}
	start := len(d.buf)
	take := min(len(chunk), MaxStreamBytes-start)
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
	return d.settle(accepted(v))
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

// GrammarWork returns the grammar's work so far: one unit per byte plus one per case-table
// comparison. It is bounded by MaxGrammarWork.
func (d *Decoder) GrammarWork() int { return d.m.work }

// feed runs the new bytes buf[start:] through the scanner, then the grammar, byte by byte.
// Three shortcuts take whole runs at once where the per-byte result is known in advance:
// plain ASCII string content, a literal that is wholly present and equal, and the digits and
// commas of a bytes array. Each stops short of any byte the per-byte path might refuse, so
// outcomes and offsets are the per-byte ones.
func (d *Decoder) feed(buf string, start int) Outcome {
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
			case opInt, opCase:
				n, o = d.interiorRun(op, buf, i)
			}
			if o.t != nil {
				return o
			}
			if n > 0 {
				i += n
				continue
			}
		}
		if o := d.byteStep(buf[i], i); o.t != nil {
			return o
		}
		i++
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
