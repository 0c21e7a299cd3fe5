// Package canonjson writes canonical JSON: no insignificant whitespace, members in the order given,
// integers in shortest decimal form, and strings escaped by exactly one rule so that every
// value has exactly one rendering.
//
// String rule (the same as RFC 8785 and ECMAScript JSON.stringify): '"' and '\' are escaped
// with a backslash; U+0008, U+0009, U+000A, U+000C and U+000D use the short escapes \b \t \n
// \f \r; every other code point below U+0020 is \u00xx with lowercase hex; everything else,
// including U+007F and all non-ASCII text, is written as raw UTF-8.
package canonjson

import (
	"strconv"

	"github.com/beamagents/beamagents/internal/swar"
)

const hexDigits = "0123456789abcdef"

// AppendString appends the canonical JSON string literal of s (which must be valid UTF-8).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most text (digests, ids, prose) has nothing to escape: skip it a word at a time,
		// and look at the bytes of a word that has something one by one.
		i += plainWords(s[i:])
		for end := min(i+8, len(s)); i < end; i++ {
			c := s[i]
			if c >= 0x20 && c != '"' && c != '\\' {
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscape(dst, c)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Byte lanes of a 64-bit word.
const (
	lanes1    = swar.Ones
	lanesHigh = swar.High
)

// plainWords returns the length of the longest prefix of s made of whole 8-byte words none of
// whose bytes needs escaping (no byte below 0x20, no '"', no '\').
//
// Each test is the classic "has a byte less than n" word test (n = 0x20, and 1 for a lane
// XORed to zero by '"' or '\'): the lowest lane that matches borrows and ends up with its
// high bit set while the byte's is clear; no lane borrows without a lower match, so the
// answer is exact. Bytes of 0x80 and above (UTF-8) never match.
func plainWords(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := swar.Load64(s[i:])
		quote, backslash := w^(lanes1*'"'), w^(lanes1*'\\')
		if ((w-lanes1*0x20)|(quote-lanes1)|(backslash-lanes1))&^w&lanesHigh != 0 {
			break
		}
	}
	return i
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// ShortEscape reports whether the control byte c has a short escape (\b \t \n \f \r).
func ShortEscape(c byte) bool {
	return c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// Object is an ordered JSON object; Array a JSON array. Together with string, int, uint64,
// bool and Raw they form the small document model the schema and provider documents are
// built from.
type (
	Object []Member
	Array  []any
	Raw    []byte // already canonical JSON, copied verbatim
)

// Member is one member of an Object.
type Member struct {
	Key   string
	Value any
}

// Append appends the canonical rendering of v. It panics on a type outside the model: the
// model is only ever built by this module's own code, so that is a programming error.
func Append(dst []byte, v any) []byte {
	switch v := v.(type) {
	case Object:
		dst = append(dst, '{')
		for i, m := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = Append(dst, m.Value)
		}
		return append(dst, '}')
	case Array:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Append(dst, e)
		}
		return append(dst, ']')
	case string:
		return AppendString(dst, v)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case uint64:
		return strconv.AppendUint(dst, v, 10)
	case bool:
		return strconv.AppendBool(dst, v)
	case Raw:
		return append(dst, v...)
	}
	panic("canonjson: unsupported value type")
}

// Quote returns s as a canonical JSON string literal, cut to at most max bytes of s (on a
// UTF-8 boundary, with "…" appended when cut). Diagnostics use it for untrusted text so a
// message stays one bounded line.
func Quote(s string, max int) string {
	cut := false
	if len(s) > max {
		i := max
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		s, cut = s[:i], true
	}
	q := string(AppendString(nil, s))
	if cut {
		q += "…"
	}
	return q
}

// Strings returns ss as an Array of strings.
func Strings(ss []string) Array {
	a := make(Array, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// AppendStrings appends the canonical rendering of Strings(ss) without building it.
func AppendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendString(dst, s)
	}
	return append(dst, ']')
}
