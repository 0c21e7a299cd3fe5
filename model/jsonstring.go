package model

import (
	"math/bits"
	"unicode/utf8"

	"github.com/beamagents/beamagents/internal/swar"
)

// jsonSafe marks the ASCII bytes encoding/json writes as they are: printable, and neither a
// quote, a backslash nor one of its HTML escapes. Runs of them are copied in one append.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := byte(0x20); c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString appends s as a JSON string exactly as encoding/json's Marshal writes it
// (HTML-safe escapes, \b \f \n \r \t, \u00xx for other controls, \u2028 and \u2029), without
// Marshal's allocations, and reports whether s is valid UTF-8. It checks validity as it
// escapes, in one pass; when s is not valid, the bytes appended so far are not meaningful.
// The cache-key material depends on these bytes, so a test compares it with encoding/json
// over arbitrary strings.
func appendJSONString(b []byte, s string) ([]byte, bool) {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			m := unsafeBytes(swar.Load64(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // the first byte to look at
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case size == 1: // only an invalid byte decodes to one byte at or above RuneSelf
			return b, false
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}

// unsafeBytes tests the 8 bytes of x at once for a byte that is not jsonSafe: one with its
// high bit, one below 0x20, or one of the five escaped characters (setting bit 2 makes '"' of
// '&', setting bit 1 '<' of '>'). It returns 0 when all are safe, else a mask whose lowest set
// bit is the high bit of the first byte that is not safe (a byte that is not can make a later
// one look so too, never an earlier one).
func unsafeBytes(x uint64) uint64 {
	const ones, high = swar.Ones, swar.High
	quoteAmp := x | 0x04*ones ^ '&'*ones
	angle := x | 0x02*ones ^ '>'*ones
	backslash := x ^ '\\'*ones
	bad := x | (x-0x20*ones)&^x |
		(quoteAmp-ones)&^quoteAmp | (angle-ones)&^angle | (backslash-ones)&^backslash
	return bad & high
}
