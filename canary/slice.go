package canary

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Buckets is how many buckets the keys are spread over: one per 0.01 percent.
const Buckets = 10000

// ErrPercent is the error of a percentage outside 0–100 (or not a number).
var ErrPercent = errors.New("canary percentage must be between 0 and 100")

// Bucket returns the key's bucket in [0, Buckets): the first 8 bytes of SHA-256(key),
// big-endian, modulo Buckets.
func Bucket(key []byte) uint32 {
	h := sha256.Sum256(key)
	return uint32(binary.BigEndian.Uint64(h[:8]) % Buckets)
}

// Slice is a canary's share of the keys in buckets (hundredths of a percent): the keys whose
// bucket is below it. The zero Slice holds no key, Buckets every key.
type Slice uint32

// FromPercent returns the slice of p percent, rounded to the nearest hundredth of a percent.
// It refuses with ErrPercent a p below 0, above 100 or not a number.
func FromPercent(p float64) (Slice, error) {
	if math.IsNaN(p) || p < 0 || p > 100 {
		return 0, fmt.Errorf("%w (got %v)", ErrPercent, p)
	}
	return Slice(math.Round(p * 100)), nil
}

// Percent returns the slice's share of the keys in percent.
func (s Slice) Percent() float64 { return float64(s) / 100 }

// Contains reports whether key is in the slice.
func (s Slice) Contains(key []byte) bool { return Bucket(key) < uint32(s) }
