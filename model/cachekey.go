package model

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
)

// cacheKeyDomain versions the canonical request material; changing the encoding changes it.
const cacheKeyDomain = "beamagents.model.cache-key.v1"

// CacheKey returns the replay-cache key of req: 64 lowercase hex digits of SHA-256 over the
// canonical request material. The material is one compact JSON document with a fixed member
// order, strings escaped by encoding/json, integers and floats as decimal strings, and byte
// strings in standard base64:
//
//	{"domain":…,"model":…,"messages":[{"role":…,"content":…},…],"schema_digest":…,
//	 "tools":[{"name":…,"description":…,"digest":…},…],"sampling":{"temperature":…,"top_p":…,"max_output_tokens":…,"seed":…},
//	 "entity_key":…,"seq":…,"step":…}
//
// A message's "tool_calls" ([{"id":…,"name":…,"arguments":…},…]) and "tool_call_id" members,
// and the "tools" member, are present only when non-empty.
//
// Text that is not valid UTF-8 is written as {"base64":…} so it cannot collide with its
// replacement-character reading.
//
// The response schema itself is not hashed: SchemaDigest identifies it.
func CacheKey(req *Request) string {
	// The material streams into the digest through a stack buffer, flushed between messages:
	// a usual key allocates only its string, and a long conversation no more than the buffer
	// its longest message needs.
	var buf [1024]byte
	h := sha256.New()
	b := appendMaterialHead(buf[:0], req)
	for i := range req.Messages {
		if len(b) >= len(buf)/2 {
			h.Write(b)
			b = b[:0]
		}
		b = appendMessage(b, i, &req.Messages[i])
	}
	h.Write(appendMaterialTail(b, req))
	var sum [sha256.Size]byte
	var key [2 * sha256.Size]byte
	hex.Encode(key[:], h.Sum(sum[:0]))
	return string(key[:])
}

// materialHead is the material up to the model; the domain needs no escaping.
const materialHead = `{"domain":"` + cacheKeyDomain + `","model":`

func appendMaterialHead(b []byte, req *Request) []byte {
	b = append(b, materialHead...)
	b = appendString(b, req.Model)
	return append(b, `,"messages":[`...)
}

func appendMessage(b []byte, i int, m *Message) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = append(b, `{"role":`...)
	b = appendString(b, m.Role)
	b = append(b, `,"content":`...)
	b = appendString(b, m.Content)
	// Tool-call members exist only on messages that have them, so the material of every
	// other message (and every key recorded before native tools) is unchanged.
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":`...)
		b = appendToolCalls(b, m.ToolCalls)
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	}
	return append(b, '}')
}

func appendToolCalls(b []byte, calls []ToolCall) []byte {
	b = append(b, '[')
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, c.ID)
		b = append(b, `,"name":`...)
		b = appendString(b, c.Name)
		b = append(b, `,"arguments":`...)
		b = appendString(b, c.Arguments)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendTools appends the native tool declarations: name, description and schema digest (the
// digest identifies the parameters' schema, as SchemaDigest does the response schema's).
func appendTools(b []byte, tools []Tool) []byte {
	b = append(b, `,"tools":[`...)
	for i, t := range tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, t.Name)
		b = append(b, `,"description":`...)
		b = appendString(b, t.Description)
		b = append(b, `,"digest":`...)
		b = appendString(b, t.Digest)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendMaterialTail appends what follows the messages. Numbers and base64 are written
// straight into their quotes: their characters are all ones JSON leaves unescaped.
func appendMaterialTail(b []byte, req *Request) []byte {
	b = append(b, `],"schema_digest":`...)
	b = appendString(b, req.SchemaDigest)
	if len(req.Tools) > 0 {
		b = appendTools(b, req.Tools)
	}
	b = append(b, `,"sampling":{"temperature":`...)
	b = appendOptFloat(b, req.Sampling.Temperature)
	b = append(b, `,"top_p":`...)
	b = appendOptFloat(b, req.Sampling.TopP)
	b = append(b, `,"max_output_tokens":"`...)
	b = strconv.AppendInt(b, req.Sampling.MaxOutputTokens, 10)
	b = append(b, `","seed":`...)
	if req.Sampling.Seed == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = strconv.AppendInt(b, *req.Sampling.Seed, 10)
		b = append(b, '"')
	}
	b = append(b, `},"entity_key":"`...)
	b = base64.StdEncoding.AppendEncode(b, req.EntityKey)
	b = append(b, `","seq":"`...)
	b = strconv.AppendInt(b, req.Seq, 10)
	b = append(b, `","step":"`...)
	b = strconv.AppendUint(b, uint64(req.Step), 10)
	return append(b, `"}`...)
}

func appendOptFloat(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = strconv.AppendFloat(b, *f, 'g', -1, 64)
	return append(b, '"')
}

// appendString appends s as a JSON string, escaped as encoding/json escapes it, which is all
// canonical material needs. Text that is not valid UTF-8 would be replaced by U+FFFD there, so
// two different byte strings could collide: it is written as {"base64":…} instead.
func appendString(b []byte, s string) []byte {
	start := len(b)
	b, ok := appendJSONString(b, s)
	if ok {
		return b
	}
	b = append(b[:start], `{"base64":"`...)
	b = base64.StdEncoding.AppendEncode(b, []byte(s))
	return append(b, `"}`...)
}
