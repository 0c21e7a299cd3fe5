package negotiate

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Digest domains: each record kind hashes under its own domain, so a digest of one kind is
// never mistaken for a digest of another.
const (
	deltaDomain    = "beam_agents.negotiate delta.v1\x00"
	manifestDomain = "beam_agents.negotiate manifest.v1\x00"
	receiptDomain  = "beam_agents.negotiate receipt.v1\x00"
	dialectDomain  = "beam_agents.negotiate provider_dialect.v1\x00"
)

func digestOf(domain string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// sha256Of is the plain SHA-256 of output bytes, with no domain: a receiver recomputes it over
// the bytes it received without knowing anything of this package.
func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

const hexDigits = "0123456789abcdef"

// appendString appends the canonical JSON string literal of s (valid UTF-8) by the one rule
// the interaction value document uses: '"' and '\' escaped with a backslash, \b \t \n \f \r
// for those five controls, \u00xx (lowercase) for the other controls, everything else raw.
// The strict decoder re-checks every document this package renders, so a divergence from its
// rule could only ever refuse, never admit.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
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

// object and array are the small document model the delta, manifest and receipt documents
// are rendered from; members render in the order given, with no whitespace.
type (
	object []member
	array  []any
)

type member struct {
	key   string
	value any
}

// appendJSON renders v (object, array, string, int, bool). Only this package builds these
// documents, so any other type is a programming error.
func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case object:
		dst = append(dst, '{')
		for i, m := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m.key)
			dst = append(dst, ':')
			dst = appendJSON(dst, m.value)
		}
		return append(dst, '}')
	case array:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case string:
		return appendString(dst, v)
	case int:
		return strconv.AppendInt(dst, int64(v), 10)
	case bool:
		return strconv.AppendBool(dst, v)
	}
	panic("negotiate: unsupported document value")
}

func stringArray(ss []string) array {
	a := make(array, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// quote renders untrusted text as a bounded JSON string literal for a diagnostic.
func quote(s string, max int) string {
	cut := false
	if len(s) > max {
		i := max
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
		s, cut = s[:i], true
	}
	q := string(appendString(nil, s))
	if cut {
		q += "…"
	}
	return q
}
