package model

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// The cache-key implementation as first written: one byte slice of material, then SHA-256.
// It is the definition the streamed CacheKey must equal byte for byte, kept for the tests only.

func refCacheKey(req *Request) string {
	sum := sha256.Sum256(refCacheMaterial(req))
	return hex.EncodeToString(sum[:])
}

func refCacheMaterial(req *Request) []byte {
	b := []byte(`{"domain":`)
	b = refAppendString(b, cacheKeyDomain)
	b = append(b, `,"model":`...)
	b = refAppendString(b, req.Model)
	b = append(b, `,"messages":[`...)
	for i, m := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = refAppendString(b, m.Role)
		b = append(b, `,"content":`...)
		b = refAppendString(b, m.Content)
		b = append(b, '}')
	}
	b = append(b, `],"schema_digest":`...)
	b = refAppendString(b, req.SchemaDigest)
	b = append(b, `,"sampling":{"temperature":`...)
	b = refAppendOptFloat(b, req.Sampling.Temperature)
	b = append(b, `,"top_p":`...)
	b = refAppendOptFloat(b, req.Sampling.TopP)
	b = append(b, `,"max_output_tokens":`...)
	b = refAppendString(b, strconv.FormatInt(req.Sampling.MaxOutputTokens, 10))
	b = append(b, `,"seed":`...)
	if req.Sampling.Seed == nil {
		b = append(b, "null"...)
	} else {
		b = refAppendString(b, strconv.FormatInt(*req.Sampling.Seed, 10))
	}
	b = append(b, `},"entity_key":`...)
	b = refAppendString(b, base64.StdEncoding.EncodeToString(req.EntityKey))
	b = append(b, `,"seq":`...)
	b = refAppendString(b, strconv.FormatInt(req.Seq, 10))
	b = append(b, `,"step":`...)
	b = refAppendString(b, strconv.FormatUint(uint64(req.Step), 10))
	return append(b, '}')
}

func refAppendOptFloat(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return refAppendString(b, strconv.FormatFloat(*f, 'g', -1, 64))
}

func refAppendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		b = append(b, `{"base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, []byte(s))
		return append(b, `"}`...)
	}
	return refAppendJSONString(b, s)
}

func refAppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
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
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
