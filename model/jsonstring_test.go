package model

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// firstUnsafe is what unsafeBytes must find, one byte at a time: the index of the first byte of
// x that is not jsonSafe, or 8.
func firstUnsafe(x uint64) int {
	for i := range 8 {
		if c := byte(x >> (8 * i)); c >= 0x80 || !jsonSafe[c] {
			return i
		}
	}
	return 8
}

// unsafeBytes finds the first byte that is not jsonSafe exactly: every byte value at every
// position of a safe word, and random words dense in the bytes it tests for.
func TestUnsafeBytes(t *testing.T) {
	check := func(x uint64) {
		t.Helper()
		want, m := firstUnsafe(x), unsafeBytes(x)
		if got := bits.TrailingZeros64(m) / 8; (m == 0) != (want == 8) || m != 0 && got != want {
			t.Fatalf("unsafeBytes(%#016x) = %#016x: first unsafe byte %d, want %d", x, m, got, want)
		}
	}
	const safe = 0x6161616161616161 // "aaaaaaaa"
	for c := range 256 {
		for p := range 8 {
			check(safe&^(0xff<<(8*p)) | uint64(c)<<(8*p))
		}
	}
	interesting := []byte{0x00, 0x1f, 0x20, 0x21, '"', '#', '&', '\'', '<', '=', '>', '?', '\\', ']', 0x7f, 0x80, 0xc3, 0xe2, 0xff, 'a'}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var x uint64
		for p := range 8 {
			c := uint64(interesting[r.IntN(len(interesting))])
			if r.IntN(3) == 0 {
				c = uint64(r.IntN(256))
			}
			x |= c << (8 * p)
		}
		check(x)
	}
}
