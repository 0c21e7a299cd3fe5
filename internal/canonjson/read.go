package canonjson

import "strings"

// CanonicalEscape decodes the escape at the start of s when it is the one AppendString writes
// for its byte, returning the byte and the escape's length; n is 0 when s does not start with
// a canonical escape ("\/", "\u0041", uppercase hex and surrogate pairs are all valid JSON but
// never canonical). Readers use it to tell canonical text from merely valid text.
func CanonicalEscape(s string) (d byte, n int) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0
	}
	switch s[1] {
	case '"', '\\':
		return s[1], 2
	case 'b':
		return '\b', 2
	case 't':
		return '\t', 2
	case 'n':
		return '\n', 2
	case 'f':
		return '\f', 2
	case 'r':
		return '\r', 2
	case 'u':
		if len(s) < 6 || s[2] != '0' || s[3] != '0' || s[4] > '1' || s[4] < '0' {
			return 0, 0
		}
		lo := strings.IndexByte(hexDigits, s[5])
		if lo < 0 {
			return 0, 0
		}
		d = (s[4]-'0')<<4 | byte(lo)
		if ShortEscape(d) {
			return 0, 0
		}
		return d, 6
	}
	return 0, 0
}
