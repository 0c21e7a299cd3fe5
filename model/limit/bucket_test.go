package limit

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type take struct {
		at   float64 // seconds after t0
		cost float64
		give bool
		wait time.Duration
	}
	for _, tc := range []struct {
		name      string
		perMinute int64
		takes     []take
	}{
		{"unlimited never waits", 0, []take{{0, 1e9, false, 0}, {0, 1e9, false, 0}}},
		{"one a minute: the second waits a minute, the third two", 1, []take{
			{0, 1, false, 0}, {0, 1, false, time.Minute}, {0, 1, false, 2 * time.Minute}}},
		{"a second's share at once, then the rate", 120, []take{
			{0, 1, false, 0}, {0, 1, false, 0}, {0, 1, false, 500 * time.Millisecond}, {1.5, 1, false, 0}}},
		{"a cost over the capacity starts on a full bucket and leaves a debt", 60, []take{
			{0, 10, false, 0}, {0, 1, false, 10 * time.Second}}},
		{"a refund shortens the next wait, never above capacity", 60, []take{
			{0, 10, false, 0}, {0, 5, true, 0}, {0, 1, false, 5 * time.Second}, {100, 1e6, true, 0}, {100, 1, false, 0}, {100, 1, false, time.Second}}},
	} {
		b := newBucket(tc.perMinute, t0)
		for i, tk := range tc.takes {
			if tk.give {
				b.give(tk.cost, at(tk.at))
				continue
			}
			if got := b.take(tk.cost, at(tk.at)); got.Round(time.Millisecond) != tk.wait {
				t.Errorf("%s: take %d waits %s, want %s", tc.name, i, got, tk.wait)
			}
		}
	}
}
