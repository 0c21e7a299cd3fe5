// Package swar holds the word loads and lane constants of the runtime's byte scanners that
// test eight bytes at once (SIMD within a register): the canonical writer, the streaming
// decoder, the cache-key material and the cache-key check. Each scanner keeps its own word
// test, pinned to its byte-wise rule by an exhaustive test; only the load and the constants
// are shared.
package swar

const (
	// Ones has 1 in every byte lane; a byte b times Ones repeats b in every lane.
	Ones = 0x0101010101010101
	// High has the high bit of every byte lane set.
	High = 0x8080808080808080
)

// Load64 returns the first eight bytes of s as a little-endian word: byte i in lane i. The
// compiler makes it one load.
func Load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
