package streamcanon

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// Lexer states.
const (
	stPlain   = iota // between tokens
	stString         // inside a string
	stEscape         // after a backslash
	stUnicode        // inside \uXXXX
	stNumber         // inside a number token
)

// Writer feeds a streaming decoder with the canonical form of provider text pushed to it.
// It is not safe for concurrent use; use one per response.
type Writer struct {
	dec     *stream.Decoder
	started bool
	env     []byte

	state   int
	objects []bool // container stack: true for an object, false for an array
	hex     []byte // digits of a \u escape
	high    rune   // a pending high surrogate
	num     []byte // the number token so far
	out     []byte
	pushed  int

	expectKey bool // the next string is a member key
	inKey     bool // inside a member key
	keyDone   bool // a member key just ended
	keyStart  int  // where the key being read begins in out
	degraded  bool // a member key was refused: early refusal is off for this text
}

// New returns a Writer that feeds dec, a decoder for s.
func New(s *interaction.Schema, dec *stream.Decoder) *Writer {
	env := append([]byte(`{"schema":`), canonjson.AppendString(nil, interaction.ValueFormat)...)
	env = append(env, `,"root_type_id":`...)
	env = canonjson.AppendString(env, s.RootTypeID())
	env = append(env, `,"schema_digest":`...)
	env = canonjson.AppendString(env, s.Digest())
	env = append(env, `,"value":`...)
	return &Writer{dec: dec, env: env}
}

// Pushed returns how many provider bytes have been pushed.
func (w *Writer) Pushed() int { return w.pushed }

// Degraded reports that a member key was refused. A key in another order than the
// declaration's, which canonicalization would reorder, looks exactly like an undeclared one to
// the streaming decoder, so from that key on the Writer stops refusing early and leaves the
// verdict to the whole-text admission.
func (w *Writer) Degraded() bool { return w.degraded }

// Push canonicalizes chunk and pushes the result to the decoder, returning its outcome.
func (w *Writer) Push(chunk []byte) stream.Outcome {
	w.pushed += len(chunk)
	if w.degraded {
		return stream.Outcome{}
	}
	if !w.started {
		w.started = true
		w.out = append(w.out, w.env...)
	}
	for _, b := range chunk {
		w.step(b)
		if w.keyDone {
			w.keyDone = false
			if o := w.sendKey(); o.State() == stream.Refused || w.degraded {
				return o
			}
		}
	}
	// A key still being read stays buffered: it goes to the decoder whole.
	n := len(w.out)
	if w.inKey {
		n = w.keyStart
	}
	var o stream.Outcome
	if n > 0 {
		o = w.dec.Push(w.out[:n])
	}
	w.out = append(w.out[:0], w.out[n:]...)
	w.keyStart = 0
	return o
}

// sendKey pushes what precedes a member key, then the key alone, so that a refusal inside
// the key is told apart from any other.
func (w *Writer) sendKey() stream.Outcome {
	if w.keyStart > 0 {
		if o := w.dec.Push(w.out[:w.keyStart]); o.State() == stream.Refused {
			return o
		}
	}
	o := w.dec.Push(w.out[w.keyStart:])
	w.out = w.out[:0]
	if o.State() == stream.Refused {
		w.degraded = true
		return stream.Outcome{}
	}
	return o
}

func (w *Writer) step(b byte) {
	switch w.state {
	case stString:
		w.stringByte(b)
	case stEscape:
		w.escape(b)
	case stUnicode:
		w.unicode(b)
	case stNumber:
		if isNumberByte(b) {
			w.num = append(w.num, b)
			return
		}
		w.endNumber()
		w.plain(b)
	default:
		w.plain(b)
	}
}

func (w *Writer) plain(b byte) {
	switch b {
	case ' ', '\t', '\n', '\r':
		return
	case '"':
		w.state = stString
		if w.expectKey {
			w.expectKey, w.inKey, w.keyStart = false, true, len(w.out)
		}
	case ',':
		w.expectKey = len(w.objects) > 0 && w.objects[len(w.objects)-1]
	case '{':
		w.objects = append(w.objects, true)
		w.expectKey = true
	case '[':
		w.objects = append(w.objects, false)
	case '}', ']':
		if len(w.objects) > 0 {
			w.objects = w.objects[:len(w.objects)-1]
		}
	default:
		if b == '-' || b >= '0' && b <= '9' {
			w.state = stNumber
			w.num = append(w.num[:0], b)
			return
		}
	}
	w.out = append(w.out, b)
}

// endNumber writes a finished number token: as a decimal string where a member's value is an
// integer, as it is in an array (bytes) or when it is not an integer (the decoder refuses it).
func (w *Writer) endNumber() {
	w.state = stPlain
	inObject := len(w.objects) > 0 && w.objects[len(w.objects)-1]
	if !inObject || !isInteger(w.num) {
		w.out = append(w.out, w.num...)
		return
	}
	w.out = append(w.out, '"')
	if string(w.num) == "-0" {
		w.out = append(w.out, '0')
	} else {
		w.out = append(w.out, w.num...)
	}
	w.out = append(w.out, '"')
}

func (w *Writer) stringByte(b byte) {
	switch {
	case b == '\\':
		w.state = stEscape
		return
	case b == '"':
		w.state = stPlain
		if w.inKey {
			w.inKey, w.keyDone = false, true
		}
	}
	w.flushSurrogate()
	w.out = append(w.out, b)
}

func (w *Writer) escape(b byte) {
	w.state = stString
	r, ok := jsontext.Unescape(b)
	switch {
	case b == 'u':
		w.state = stUnicode
		w.hex = w.hex[:0]
		return
	case !ok:
		// Not a JSON escape: pass it on for the decoder to refuse.
		w.out = append(w.out, '\\', b)
		return
	}
	w.flushSurrogate()
	w.rune(r)
}

func (w *Writer) unicode(b byte) {
	w.hex = append(w.hex, b)
	if len(w.hex) < 4 {
		return
	}
	w.state = stString
	r, ok := parseHex(w.hex)
	switch {
	case !ok:
		w.out = append(w.out, `\u`...)
		w.out = append(w.out, w.hex...)
	case utf16.IsSurrogate(r) && r < 0xdc00:
		w.flushSurrogate()
		w.high = r
	case utf16.IsSurrogate(r) && w.high != 0:
		w.rune(utf16.DecodeRune(w.high, r))
		w.high = 0
	default:
		w.flushSurrogate()
		w.rune(r) // a lone low surrogate stays an escape for the decoder to refuse
	}
}

// flushSurrogate writes a high surrogate that no low one followed: not valid text, so it goes
// on as an escape for the decoder to refuse.
func (w *Writer) flushSurrogate() {
	if w.high != 0 {
		w.out = append(w.out, `\u`...)
		w.out = append(w.out, hexDigits(w.high)...)
		w.high = 0
	}
}

// rune writes r inside a string by the canonical escaping rule.
func (w *Writer) rune(r rune) {
	if r < 0x20 || r == '"' || r == '\\' {
		s := canonjson.AppendString(nil, string(r))
		w.out = append(w.out, s[1:len(s)-1]...)
		return
	}
	if utf16.IsSurrogate(r) {
		w.out = append(w.out, `\u`...)
		w.out = append(w.out, hexDigits(r)...)
		return
	}
	w.out = utf8.AppendRune(w.out, r)
}

func isNumberByte(b byte) bool {
	return b >= '0' && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

func isInteger(tok []byte) bool {
	digits := tok
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 1 && digits[0] == '0' {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

func parseHex(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
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
	return r, true
}

func hexDigits(r rune) []byte {
	const hx = "0123456789abcdef"
	return []byte{hx[r>>12&0xf], hx[r>>8&0xf], hx[r>>4&0xf], hx[r&0xf]}
}

// Finish ends the text: a pending number token is written, the envelope closed, and the
// decoder's Finish decides. A degraded Writer returns Incomplete: the whole text decides.
func (w *Writer) Finish() stream.Outcome {
	if w.degraded {
		return stream.Outcome{}
	}
	if !w.started {
		w.started = true
		w.out = append(w.out, w.env...)
	}
	if w.state == stNumber {
		w.endNumber()
	}
	w.out = append(w.out, '}', '\n')
	if o := w.dec.Push(w.out); o.State() == stream.Refused {
		return o
	}
	return w.dec.Finish()
}
