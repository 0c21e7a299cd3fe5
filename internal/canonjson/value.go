package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// EnvelopeMembers are the members of a value document's envelope, in canonical order.
var EnvelopeMembers = [...]string{"schema", "root_type_id", "schema_digest", "value"}

// AppendValuePrefix appends a value document's envelope up to (not including) its value:
// {"schema":format,"root_type_id":rootTypeID,"schema_digest":digest,"value":
func AppendValuePrefix(dst []byte, format, rootTypeID, digest string) []byte {
	dst = append(dst, `{"schema":`...)
	dst = AppendString(dst, format)
	dst = append(dst, `,"root_type_id":`...)
	dst = AppendString(dst, rootTypeID)
	dst = append(dst, `,"schema_digest":`...)
	dst = AppendString(dst, digest)
	return append(dst, `,"value":`...)
}

// AppendBytes appends the canonical rendering of a bytes value: an array of decimal
// integers 0..255.
func AppendBytes[T ~string | ~[]byte](dst []byte, b T) []byte {
	dst = append(dst, '[')
	for i := 0; i < len(b); i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendUint(dst, uint64(b[i]), 10)
	}
	return append(dst, ']')
}

// MemberPath renders the JSON path selector ["key"] of a member: a stable id in full (ids
// are at most 128 bytes), an untrusted key cut to a bounded length.
func MemberPath(key string) string { return "[" + Quote(key, 128) + "]" }

// Digest is "sha256:" + hex(SHA-256(domain || body)). Each kind of document hashes under its
// own domain, so a digest of one kind is never mistaken for a digest of another.
func Digest(domain string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
