package model

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

// cacheKeyDomain versions the canonical request material; changing the encoding changes it.
const cacheKeyDomain = "beamagents.model.cache-key.v1"

// CacheKey returns the replay-cache key of req: 64 lowercase hex digits of SHA-256 over the
// canonical request material. The material is one compact JSON document with a fixed member
// order, strings escaped by encoding/json, integers and floats as decimal strings, and byte
// strings in standard base64:
//
//	{"domain":…,"model":…,"messages":[{"role":…,"content":…},…],"schema_digest":…,
//	 "sampling":{"temperature":…,"top_p":…,"max_output_tokens":…,"seed":…},
//	 "entity_key":…,"seq":…,"step":…}
//
// Text that is not valid UTF-8 is written as {"base64":…} so it cannot collide with its
// replacement-character reading.
//
// The response schema itself is not hashed: SchemaDigest identifies it.
func CacheKey(req *Request) string {
	sum := sha256.Sum256(cacheMaterial(req))
	return hex.EncodeToString(sum[:])
}

func cacheMaterial(req *Request) []byte {
	n := 320 + len(req.Model) + len(req.SchemaDigest) + 2*len(req.EntityKey)
	for _, m := range req.Messages {
		n += len(m.Role) + len(m.Content) + 32
	}
	b := append(make([]byte, 0, n), `{"domain":`...) // one allocation for the usual text
	b = appendString(b, cacheKeyDomain)
	b = append(b, `,"model":`...)
	b = appendString(b, req.Model)
	b = append(b, `,"messages":[`...)
	for i, m := range req.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = appendString(b, m.Role)
		b = append(b, `,"content":`...)
		b = appendString(b, m.Content)
		b = append(b, '}')
	}
	b = append(b, `],"schema_digest":`...)
	b = appendString(b, req.SchemaDigest)
	b = append(b, `,"sampling":{"temperature":`...)
	b = appendOptFloat(b, req.Sampling.Temperature)
	b = append(b, `,"top_p":`...)
	b = appendOptFloat(b, req.Sampling.TopP)
	b = append(b, `,"max_output_tokens":`...)
	b = appendString(b, strconv.FormatInt(req.Sampling.MaxOutputTokens, 10))
	b = append(b, `,"seed":`...)
	if req.Sampling.Seed == nil {
		b = append(b, "null"...)
	} else {
		b = appendString(b, strconv.FormatInt(*req.Sampling.Seed, 10))
	}
	b = append(b, `},"entity_key":`...)
	b = appendString(b, base64.StdEncoding.EncodeToString(req.EntityKey))
	b = append(b, `,"seq":`...)
	b = appendString(b, strconv.FormatInt(req.Seq, 10))
	b = append(b, `,"step":`...)
	b = appendString(b, strconv.FormatUint(uint64(req.Step), 10))
	return append(b, '}')
}

func appendOptFloat(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	return appendString(b, strconv.FormatFloat(*f, 'g', -1, 64))
}

// appendString appends s as a JSON string, escaped as encoding/json escapes it, which is all
// canonical material needs. Text that is not valid UTF-8 would be replaced by U+FFFD there, so
// two different byte strings could collide: it is written as {"base64":…} instead.
func appendString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		b = append(b, `{"base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, []byte(s))
		return append(b, `"}`...)
	}
	return appendJSONString(b, s)
}
