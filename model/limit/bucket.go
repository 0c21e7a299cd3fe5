package limit

import "time"

// bucket is a token bucket refilled at perMinute per minute, holding at most one second's
// share (at least 1). A cost may start when the bucket holds it, or is full when the cost is
// more than it can hold. take charges the cost at once and says how long to wait until then:
// the level may go below zero, and later takers wait for the debt. A zero perMinute is
// unlimited.
type bucket struct {
	perMinute float64
	level     float64
	last      time.Time
}

func newBucket(perMinute int64, now time.Time) bucket {
	b := bucket{perMinute: float64(perMinute), last: now}
	b.level = b.capacity()
	return b
}

func (b *bucket) capacity() float64 { return max(1, b.perMinute/60) }

func (b *bucket) refill(now time.Time) {
	if dt := now.Sub(b.last); dt > 0 {
		b.level = min(b.capacity(), b.level+b.perMinute*dt.Minutes())
		b.last = now
	}
}

// take charges cost at now and returns the wait before the charge is covered.
func (b *bucket) take(cost float64, now time.Time) time.Duration {
	if b.perMinute <= 0 || cost <= 0 {
		return 0
	}
	b.refill(now)
	short := min(cost, b.capacity()) - b.level
	b.level -= cost
	if short <= 0 {
		return 0
	}
	return time.Duration(short / b.perMinute * float64(time.Minute))
}

// give returns cost to the bucket (a refund, or a negative correction), never above capacity.
func (b *bucket) give(cost float64, now time.Time) {
	if b.perMinute <= 0 {
		return
	}
	b.refill(now)
	b.level = min(b.capacity(), b.level+cost)
}

// reconfigure changes the rate, keeping the level (bounded by the new capacity).
func (b *bucket) reconfigure(perMinute int64, now time.Time) {
	b.refill(now)
	if b.perMinute <= 0 {
		b.level = max(1, float64(perMinute)/60)
	}
	b.perMinute = float64(perMinute)
	b.level = min(b.level, b.capacity())
}
