package effector

import (
	"fmt"
	"math"
	"strings"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// ExpiryPolicy names how the effector judges an intent's deadline.
type ExpiryPolicy string

// Expiry policies.
const (
	// ExpiryClock compares the intent's expires_at_ms with the effector's clock, and results
	// and decisions carry the clock as their event time: right when the input's event time
	// is the wall clock (a live run). An intent whose event times are behind the clock (a
	// backfill) is refused as expired.
	ExpiryClock ExpiryPolicy = "clock"
	// ExpiryEmission measures each intent's window on the effector's clock from the
	// intent's emission as its transport recorded it (the intents file's modification time;
	// the Pub/Sub message's publish time). The window is the deadline the attempt was given
	// in the activation's event time: expires_at_ms - created_at_ms for the first attempt,
	// and for attempt k, an escalation re-emitted at the k-th deadline with the same
	// created_at_ms, that span divided by k+1. The intent expires at the end of its window,
	// or when the clock is MaxLag past expires_at_ms whatever the emission says. Its
	// outcomes carry created_at_ms plus the time since its emission as their event time,
	// before expires_at_ms while the intent is admitted, whichever attempt ran.
	ExpiryEmission ExpiryPolicy = "emission"
)

// maxExpiryLag bounds Expiry.MaxLag: 366 days.
const maxExpiryLag = 366 * 24 * time.Hour

// Expiry is the effector's expiry policy. The zero value is ExpiryClock.
type Expiry struct {
	Policy ExpiryPolicy
	// MaxLag (ExpiryEmission only, required, at most 366 days): how far behind the
	// effector's clock an intent's expires_at_ms may be and the intent still run. It bounds
	// what a transport's emission time alone can admit: an intent older than the backfill
	// it belongs to stays refused.
	MaxLag time.Duration
}

// ParseExpiry parses an --expiry value: "clock", or "emission:MAXLAG" with MAXLAG a Go
// duration (for example emission:24h). A value it refuses is an ErrConfig naming the forms.
func ParseExpiry(s string) (Expiry, error) {
	if s == string(ExpiryClock) {
		return Expiry{Policy: ExpiryClock}, nil
	}
	lag, ok := strings.CutPrefix(s, string(ExpiryEmission)+":")
	if !ok {
		if s == string(ExpiryEmission) {
			return Expiry{}, &Error{Code: CodeConfig, Detail: "emission needs its bound: emission:MAXLAG, for example emission:24h"}
		}
		return Expiry{}, &Error{Code: CodeConfig, Detail: fmt.Sprintf("%q is not clock or emission:MAXLAG (for example emission:24h)", s)}
	}
	d, err := time.ParseDuration(lag)
	if err != nil {
		return Expiry{}, &Error{Code: CodeConfig, Detail: fmt.Sprintf("emission:MAXLAG: %q is not a duration such as 24h", lag)}
	}
	x := Expiry{Policy: ExpiryEmission, MaxLag: d}
	if err := x.check(); err != nil {
		return Expiry{}, err
	}
	return x, nil
}

// String is the policy as ParseExpiry reads it.
func (x Expiry) String() string {
	if x.Policy == ExpiryEmission {
		return string(ExpiryEmission) + ":" + x.MaxLag.String()
	}
	return string(ExpiryClock)
}

func (x Expiry) check() error {
	switch x.Policy {
	case "", ExpiryClock:
		if x.MaxLag != 0 {
			return &Error{Code: CodeConfig, Detail: "the clock expiry policy takes no MaxLag"}
		}
	case ExpiryEmission:
		if x.MaxLag <= 0 || x.MaxLag > maxExpiryLag {
			return &Error{Code: CodeConfig, Detail: fmt.Sprintf("emission:MAXLAG needs MAXLAG above 0 and at most %s, not %s", maxExpiryLag, x.MaxLag)}
		}
	default:
		return &Error{Code: CodeConfig, Detail: fmt.Sprintf("expiry policy %q is not clock or emission", x.Policy)}
	}
	return nil
}

// verdict is the expiry decision on one intent at one reading of the effector's clock.
type verdict struct {
	Expired bool
	// DeadlineMs is when the intent expires on the effector's clock (0: never).
	DeadlineMs int64
	// EventMs is the intent's event time at that reading: the event time of its result or
	// decision.
	EventMs int64
	// Emission is set when the window was measured from the emission.
	Emission bool
}

// judge decides whether ti, emitted at emitted (zero: unknown), has expired at nowMs on the
// effector's clock. The emission policy needs the emission and a window (created_at_ms set,
// expires_at_ms after it); without them the intent is judged by the clock. An intent
// without expires_at_ms never expires.
func (x Expiry) judge(ti *pb.ToolIntent, emitted time.Time, nowMs int64) verdict {
	exp, created := ti.GetExpiresAtMs(), ti.GetCreatedAtMs()
	v := verdict{DeadlineMs: exp, EventMs: nowMs}
	if x.Policy == ExpiryEmission && !emitted.IsZero() && created > 0 && exp > created {
		em := emitted.UnixMilli()
		v.Emission = true
		v.DeadlineMs = min(addSat(em, window(ti)), addSat(exp, x.MaxLag.Milliseconds()))
		v.EventMs = addSat(created, max(0, subSat(nowMs, em)))
	}
	v.Expired = exp > 0 && nowMs >= v.DeadlineMs
	return v
}

// window is the deadline ti's attempt was given in event time (expires_at_ms after
// created_at_ms): the whole span for the first attempt; for attempt k, re-emitted at the k-th
// deadline with a deadline one more later, the span divided by k+1.
func window(ti *pb.ToolIntent) int64 {
	return (ti.GetExpiresAtMs() - ti.GetCreatedAtMs()) / (int64(ti.GetAttempt()) + 1)
}

// eventClock is the event time of ti's outcomes under x: a reading of the effector's clock
// mapped into the intent's event time.
func (e *Effector) eventClock(ti *pb.ToolIntent, emitted time.Time) func() int64 {
	if e.o.Expiry.Policy != ExpiryEmission {
		return e.nowMs
	}
	return func() int64 { return e.o.Expiry.judge(ti, emitted, e.nowMs()).EventMs }
}

// expiredDetail is the detail of an EXPIRED result.
func (x Expiry) expiredDetail(ti *pb.ToolIntent, emitted time.Time, v verdict, nowMs int64) string {
	if !v.Emission {
		return fmt.Sprintf("%s: expired at %d, effector clock %d", ReasonExpired, ti.GetExpiresAtMs(), nowMs)
	}
	return fmt.Sprintf("%s: expired at %d on the effector clock (attempt %d's window of %d ms from its emission at %d, at most %s after expires_at_ms %d), effector clock %d",
		ReasonExpired, v.DeadlineMs, ti.GetAttempt(), window(ti), emitted.UnixMilli(), x.MaxLag, ti.GetExpiresAtMs(), nowMs)
}

// subSat is a - b, saturated at the int64 bounds.
func subSat(a, b int64) int64 {
	if b == math.MinInt64 {
		return addSat(addSat(a, math.MaxInt64), 1)
	}
	return addSat(a, -b)
}

// addSat is a + b, saturated at the int64 bounds.
func addSat(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}
