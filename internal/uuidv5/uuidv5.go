// Package uuidv5 derives the name-based (version 5, SHA-1) UUIDs of RFC 9562 that identify
// intents, traces and spans, over names that start "<lowercase hex of entity key>|<seq>".
// It builds the hash input in the caller's buffer, so a derivation allocates nothing when
// the buffer is large enough. docs/identity.md states the names.
package uuidv5

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"
)

// Begin appends the hash input's prefix to dst: the namespace's 16 bytes, then the name's
// first two fields, the entity key in lowercase hex and seq in decimal, separated by '|'.
func Begin(dst []byte, ns [16]byte, key []byte, seq int64) []byte {
	dst = append(dst, ns[:]...)
	dst = hex.AppendEncode(dst, key)
	dst = append(dst, '|')
	return strconv.AppendInt(dst, seq, 10)
}

// Field appends one more name field: '|' and s.
func Field(dst []byte, s string) []byte {
	return append(append(dst, '|'), s...)
}

// Uint appends one more name field: '|' and n in decimal.
func Uint(dst []byte, n uint64) []byte {
	return strconv.AppendUint(append(dst, '|'), n, 10)
}

// Sum returns the UUID of the hash input b (namespace bytes followed by the name): the first
// 16 bytes of SHA-1(b) with the version set to 5 and the variant to RFC 9562's.
func Sum(b []byte) [16]byte {
	h := sha1.Sum(b)
	var u [16]byte
	copy(u[:], h[:16])
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return u
}
