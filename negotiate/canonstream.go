package negotiate

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/canonjson"
	"github.com/beamagents/beamagents/internal/jsontext"
)

// Lexer states of the streaming canonicalizer.
const (
	stPlain   = iota // between tokens
	stString         // inside a string
	stEscape         // after a backslash
	stUnicode        // inside a \u escape, reading its four hex digits
	stNumber         // inside a number token written as it is
	stInteger        // inside a number token written as an integer field's decimal string
)

// Where an integer field's value stands, when its text is held back: "-0" reads as 0, so a
// leading "-" and then "-0" wait for the next character before they are written.
const (
	intNone    = iota // not an integer field's value, or nothing held
	intAsk            // a member's string value, its first character not yet seen
	intStart          // an integer field's number token, nothing written after its quote
	intMinus          // "-" held
	intMinus0         // "-0" held
	intWriting        // an integer field's value, written as it comes
)

// canonStream feeds a streaming decoder with the canonical form of provider text pushed to
// it: the streaming twin of Canonicalize (see Stream). It is not safe for concurrent use.
type canonStream struct {
	dec     *stream.Decoder
	started bool
	env     []byte

	state   int
	objects []bool // container stack: true for an object, false for an array
	hex     []byte // digits of a \u escape
	high    rune   // a pending high surrogate
	integer int    // intNone, or where an integer field's value (a number or a string) stands
	out     []byte

	expectKey bool // the next string is a member key
	inKey     bool // inside a member key
	keyDone   bool // a member key just ended
	keyStart  int  // where the key being read begins in out
	degraded  bool // a member key was refused: early refusal is off for this text
	refused   stream.Outcome
}

func newCanonStream(s *interaction.Schema, dec *stream.Decoder) *canonStream {
	env := canonjson.AppendValuePrefix(nil, interaction.ValueFormat, s.RootTypeID(), s.Digest())
	return &canonStream{dec: dec, env: env}
}

// push canonicalizes chunk and pushes the result to the decoder, returning its outcome.
func (w *canonStream) push(chunk []byte) stream.Outcome {
	if w.degraded {
		return stream.Outcome{}
	}
	if !w.started {
		w.started = true
		w.out = append(w.out, w.env...)
	}
	for _, b := range chunk {
		w.step(b)
		if w.refused.State() == stream.Refused {
			return w.refused
		}
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
func (w *canonStream) sendKey() stream.Outcome {
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

// nextValue pushes what the decoder has not seen yet (never inside a key: a value follows
// its key's colon) and returns what it expects of the value that comes next.
func (w *canonStream) nextValue() stream.Expected {
	if len(w.out) > 0 {
		o := w.dec.Push(w.out)
		w.out = w.out[:0]
		if o.State() == stream.Refused {
			w.refused = o
			return stream.Expected{}
		}
	}
	return w.dec.NextValue()
}

// memberValue reports whether the next value is an object member's.
func (w *canonStream) memberValue() bool {
	return len(w.objects) > 0 && w.objects[len(w.objects)-1] && !w.expectKey
}

func (w *canonStream) step(b byte) {
	switch w.state {
	case stString:
		w.stringByte(b)
	case stEscape:
		w.escape(b)
	case stUnicode:
		w.unicode(b)
	case stNumber:
		if isNumberByte(b) {
			w.out = append(w.out, b)
			return
		}
		w.state = stPlain
		w.plain(b)
	case stInteger:
		if isNumberByte(b) {
			w.intByte(b)
			return
		}
		w.endInteger()
		w.plain(b)
	default:
		w.plain(b)
	}
}

func (w *canonStream) plain(b byte) {
	switch b {
	case ' ', '\t', '\n', '\r':
		return
	case '"':
		w.state = stString
		switch {
		case w.expectKey:
			w.expectKey, w.inKey, w.keyStart = false, true, len(w.out)
		case w.memberValue():
			// Perhaps an integer field's decimal string, which may be "-0".
			w.integer = intAsk
		}
	case ',':
		w.expectKey = len(w.objects) > 0 && w.objects[len(w.objects)-1]
	case ':':
		w.expectKey = false
	case '{':
		w.objects = append(w.objects, true)
		w.expectKey = true
	case '[':
		w.objects = append(w.objects, false)
	case '}', ']':
		w.expectKey = false
		if len(w.objects) > 0 {
			w.objects = w.objects[:len(w.objects)-1]
		}
	default:
		if b == '-' || b >= '0' && b <= '9' {
			w.number(b)
			return
		}
	}
	w.out = append(w.out, b)
}

// number starts a number token. Where the decoder expects an integer field's value it is
// written as that field's decimal string; anywhere else (the elements of a bytes array, or a
// value of another type, which the decoder refuses at this very byte) as it is.
func (w *canonStream) number(b byte) {
	if w.memberValue() && w.nextValue().Next == stream.ExpectInteger {
		w.state, w.integer = stInteger, intStart
		w.out = append(w.out, '"')
		w.intByte(b)
		return
	}
	w.state = stNumber
	w.out = append(w.out, b)
}

// intByte writes a character of an integer field's value, holding "-" and "-0" until the
// next one tells whether the value is negative zero. A character that makes the text no
// integer (a fraction, an exponent, a letter) is written as it is for the decoder to refuse.
func (w *canonStream) intByte(b byte) {
	switch {
	case w.integer == intStart && b == '-':
		w.integer = intMinus
	case w.integer == intMinus && b == '0':
		w.integer = intMinus0
	default:
		w.release()
		w.out = append(w.out, b)
	}
}

// release writes a held prefix as it is: what follows is not a character intByte judges.
func (w *canonStream) release() {
	switch w.integer {
	case intNone:
		return
	case intAsk:
		w.integer = intNone
		return
	case intMinus:
		w.out = append(w.out, '-')
	case intMinus0:
		w.out = append(w.out, '-', '0')
	}
	w.integer = intWriting
}

// closeInteger ends a value at its closing quote: a held "-0" is written as 0.
func (w *canonStream) closeInteger() {
	if w.integer == intMinus0 {
		w.out = append(w.out, '0')
	} else {
		w.release()
	}
	w.integer = intNone
}

// endInteger ends an integer field's value written as a number token.
func (w *canonStream) endInteger() {
	w.state = stPlain
	w.closeInteger()
	w.out = append(w.out, '"')
}

func (w *canonStream) stringByte(b byte) {
	switch {
	case b == '\\':
		w.state = stEscape
		return
	case b == '"':
		w.state = stPlain
		w.flushSurrogate()
		if w.inKey {
			w.inKey, w.keyDone = false, true
		}
		w.closeInteger()
		w.out = append(w.out, b)
		return
	}
	w.flushSurrogate()
	w.content(b)
}

// content writes one byte of a string's text: an ASCII character or a byte of a UTF-8
// sequence. Only a member's string that starts with "-" needs the decoder asked whether it is
// an integer field's decimal string.
func (w *canonStream) content(b byte) {
	switch w.integer {
	case intNone:
	case intAsk:
		w.integer = intNone
		if b == '-' && w.nextValue().Next == stream.ExpectInteger {
			w.integer = intMinus
			return
		}
	default:
		w.intByte(b)
		return
	}
	w.out = append(w.out, b)
}

func (w *canonStream) escape(b byte) {
	w.state = stString
	r, ok := jsontext.Unescape(b)
	switch {
	case b == 'u':
		w.state = stUnicode
		w.hex = w.hex[:0]
		return
	case !ok:
		// Not a JSON escape: pass it on for the decoder to refuse.
		w.flushSurrogate()
		w.release()
		w.out = append(w.out, '\\', b)
		return
	}
	w.flushSurrogate()
	w.rune(r)
}

func (w *canonStream) unicode(b byte) {
	w.hex = append(w.hex, b)
	if len(w.hex) < 4 {
		return
	}
	w.state = stString
	r, ok := parseHex(w.hex)
	switch {
	case !ok:
		w.flushSurrogate()
		w.release()
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
func (w *canonStream) flushSurrogate() {
	if w.high != 0 {
		w.release()
		w.out = append(w.out, `\u`...)
		w.out = append(w.out, hexDigits(w.high)...)
		w.high = 0
	}
}

// rune writes r inside a string by the canonical escaping rule.
func (w *canonStream) rune(r rune) {
	switch {
	case r < 0x20 || r == '"' || r == '\\':
		w.release()
		s := canonjson.AppendString(nil, string(r))
		w.out = append(w.out, s[1:len(s)-1]...)
	case r < utf8.RuneSelf:
		w.content(byte(r))
	case utf16.IsSurrogate(r):
		w.release()
		w.out = append(w.out, `\u`...)
		w.out = append(w.out, hexDigits(r)...)
	default:
		w.release()
		w.out = utf8.AppendRune(w.out, r)
	}
}

func isNumberByte(b byte) bool {
	return b >= '0' && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
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

// finish ends the text: a pending number token is written, the envelope closed, and the
// decoder's Finish decides. A degraded stream returns Incomplete: the whole text decides.
func (w *canonStream) finish() stream.Outcome {
	if w.degraded {
		return stream.Outcome{}
	}
	if !w.started {
		w.started = true
		w.out = append(w.out, w.env...)
	}
	switch w.state {
	case stInteger:
		w.endInteger()
	case stNumber:
		w.state = stPlain
	}
	w.out = append(w.out, '}', '\n')
	if o := w.dec.Push(w.out); o.State() == stream.Refused {
		return o
	}
	return w.dec.Finish()
}
