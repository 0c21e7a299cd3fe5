package interaction

import (
	"math"
	"strconv"
)

// Int is an exact integer in the union of the int64 and uint64 ranges, so integer bounds of
// every representation compare without loss. The zero value is 0.
type Int struct {
	neg bool   // true only for values below zero
	abs uint64 // magnitude; at most 1<<63 when neg
}

// IntOf returns v as an Int.
func IntOf(v int64) Int {
	if v < 0 {
		return Int{neg: true, abs: uint64(-(v + 1)) + 1}
	}
	return Int{abs: uint64(v)}
}

// uintOf returns v as an Int.
func uintOf(v uint64) Int { return Int{abs: v} }

// parseInt parses a canonical decimal integer: "0", or an optional '-' followed by a digit
// 1-9 and more digits, with no '+', no leading zero, no fraction and no exponent. It refuses
// anything else, including values outside [math.MinInt64, math.MaxUint64].
func parseInt(s string) (Int, bool) {
	v, syntax, fits := parseDecimal(s)
	return v, syntax && fits
}

// parseDecimal splits canonical syntax from range: syntax reports the canonical form,
// fits whether the value lies within [math.MinInt64, math.MaxUint64].
func parseDecimal(s string) (v Int, syntax, fits bool) {
	neg := len(s) > 0 && s[0] == '-'
	digits := s
	if neg {
		digits = s[1:]
	}
	if !canonicalDigits(digits) || neg && digits == "0" {
		return Int{}, false, false
	}
	abs, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || neg && abs > 1<<63 {
		return Int{}, true, false
	}
	return Int{neg: neg, abs: abs}, true, true
}

// canonicalDigits reports whether d is "0" or a non-empty digit string without a leading zero.
func canonicalDigits(d string) bool {
	if d == "" || d[0] == '0' && len(d) > 1 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// Cmp returns -1, 0 or +1 as a is less than, equal to or greater than b.
func (a Int) Cmp(b Int) int {
	switch {
	case a.neg != b.neg:
		if a.neg {
			return -1
		}
		return 1
	case a.abs == b.abs:
		return 0
	case (a.abs < b.abs) != a.neg:
		return -1
	}
	return 1
}

// Int64 returns a as an int64 and whether it fits.
func (a Int) Int64() (int64, bool) {
	if a.neg {
		if a.abs > 1<<63 {
			return 0, false
		}
		return -int64(a.abs-1) - 1, true
	}
	if a.abs > math.MaxInt64 {
		return 0, false
	}
	return int64(a.abs), true
}

// Uint64 returns a as a uint64 and whether it fits.
func (a Int) Uint64() (uint64, bool) { return a.abs, !a.neg }

// String returns the canonical decimal form.
func (a Int) String() string { return string(a.Append(nil)) }

// Append appends the canonical decimal form.
func (a Int) Append(dst []byte) []byte {
	if a.neg {
		dst = append(dst, '-')
	}
	return strconv.AppendUint(dst, a.abs, 10)
}
