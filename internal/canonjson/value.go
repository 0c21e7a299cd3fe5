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
//
// It allocates only the result: the hash state and the sum stay on the stack (sha256.New is
// devirtualized once inlined, as in sha256.Sum256), and the text is built in a fixed array.
func Digest(domain string, body []byte) string {
	h := sha256.New()
	var pre [64]byte // the domain as bytes without a heap copy; every domain here is shorter
	h.Write(append(pre[:0], domain...))
	h.Write(body)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	var out [len(digestPrefix) + 2*sha256.Size]byte
	copy(out[:], digestPrefix)
	hex.Encode(out[len(digestPrefix):], sum[:])
	return string(out[:])
}

const digestPrefix = "sha256:"
