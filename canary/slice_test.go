package canary

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

// The buckets are a stable contract: a relaunch must find every key where it was. The
// expected values were computed independently (Python's hashlib).
func TestBucketStable(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want uint32
	}{
		{"", 1652},
		{"conv-1", 2594},
		{"customer-42", 6469},
		{"device/7", 3889},
	} {
		if got := Bucket([]byte(tc.key)); got != tc.want {
			t.Errorf("Bucket(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
}

func TestFromPercent(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want Slice
		err  bool
	}{
		{0, 0, false},
		{50, 5000, false},
		{12.5, 1250, false},
		{0.01, 1, false},
		{100, Buckets, false},
		{-1, 0, true},
		{100.5, 0, true},
		{math.NaN(), 0, true},
	} {
		got, err := FromPercent(tc.p)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("FromPercent(%v) = %d, %v; want %d, error %v", tc.p, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrPercent) {
			t.Errorf("FromPercent(%v): %v is not ErrPercent", tc.p, err)
		}
	}
}

// Raising the percentage only adds keys; 0 holds none, 100 all; 50 holds about half.
func TestSliceMonotone(t *testing.T) {
	keys := make([][]byte, 2000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key-%d", i)
	}
	in := func(s Slice) int {
		n := 0
		for _, k := range keys {
			if s.Contains(k) {
				n++
			}
		}
		return n
	}
	for _, p := range []float64{0, 1, 10, 25, 50, 75, 99.99, 100} {
		lo, _ := FromPercent(p)
		hi, _ := FromPercent(min(p+5, 100))
		for _, k := range keys {
			if lo.Contains(k) && !hi.Contains(k) {
				t.Fatalf("key %q is in the %v%% slice but not in the %v%% one", k, lo.Percent(), hi.Percent())
			}
		}
	}
	if n := in(0); n != 0 {
		t.Errorf("0%% holds %d keys", n)
	}
	if n := in(Buckets); n != len(keys) {
		t.Errorf("100%% holds %d of %d keys", n, len(keys))
	}
	if n := in(5000); n < 900 || n > 1100 {
		t.Errorf("50%% holds %d of %d keys", n, len(keys))
	}
}

// Any key lands in a bucket below Buckets, and a key in a slice is in every larger one.
func FuzzSlice(f *testing.F) {
	f.Add([]byte("customer-2"), 20.0, 50.0)
	f.Add([]byte{}, 0.0, 100.0)
	f.Add([]byte{0xff, 0x00}, 12.34, 12.35)
	f.Fuzz(func(t *testing.T, key []byte, p, q float64) {
		if Bucket(key) >= Buckets {
			t.Fatalf("bucket %d", Bucket(key))
		}
		lo, err1 := FromPercent(min(p, q))
		hi, err2 := FromPercent(max(p, q))
		if err1 != nil || err2 != nil {
			return
		}
		if lo.Contains(key) && !hi.Contains(key) {
			t.Fatalf("%x in the %v%% slice, not in the %v%% one", key, lo.Percent(), hi.Percent())
		}
	})
}
