package effector

import (
	"errors"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// The expiry decision, policy by policy: the clock compares expires_at_ms with the effector's
// clock; emission measures the window (expires_at_ms - created_at_ms) from the intent's
// emission, bounded by MaxLag, and maps the clock into the intent's event time; without an
// emission or a window it falls back to the clock.
func TestJudge(t *testing.T) {
	const (
		now    = int64(1767240000000) // the effector's clock
		hour   = int64(time.Hour / time.Millisecond)
		window = int64(5 * time.Minute / time.Millisecond)
	)
	backfill := now - 4*hour // the activation's event time of a 4-hour-old input
	clock := Expiry{Policy: ExpiryClock}
	emission := Expiry{Policy: ExpiryEmission, MaxLag: 24 * time.Hour}
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	ti := func(created, expires int64) *pb.ToolIntent {
		return &pb.ToolIntent{IntentId: "i", EntityKey: []byte("k"), CreatedAtMs: created, ExpiresAtMs: expires}
	}
	// attempt is the k-th escalation of a call created at created: re-emitted at its k-th
	// deadline, expiring one deadline later.
	attempt := func(created int64, k uint32) *pb.ToolIntent {
		x := ti(created, created+int64(k+1)*window)
		x.Attempt = k
		return x
	}
	for _, tc := range []struct {
		name     string
		x        Expiry
		ti       *pb.ToolIntent
		emitted  time.Time
		expired  bool
		deadline int64
		event    int64
	}{
		{"clock: live, inside its window", clock, ti(now-10_000, now-10_000+window), at(now - 9_000), false, now - 10_000 + window, now},
		{"clock: at expires_at_ms", clock, ti(now-window, now), at(now - window), true, now, now},
		{"clock: a backfill is refused", clock, ti(backfill, backfill+window), at(now - 10_000), true, backfill + window, now},
		{"zero policy is the clock", Expiry{}, ti(backfill, backfill+window), at(now - 10_000), true, backfill + window, now},
		{"emission: a backfill emitted 10 s ago runs", emission, ti(backfill, backfill+window), at(now - 10_000), false, now - 10_000 + window, backfill + 10_000},
		{"emission: a backfill emitted just now", emission, ti(backfill, backfill+window), at(now), false, now + window, backfill},
		{"emission: at the end of its window", emission, ti(backfill, backfill+window), at(now - window), true, now, backfill + window},
		{"emission: live, delivered an hour after its emission", emission, ti(now-hour, now-hour+window), at(now - hour + 200), true, now - hour + 200 + window, now - 200},
		{"emission: a backfill file written an hour ago", emission, ti(backfill, backfill+window), at(now - hour), true, now - hour + window, backfill + hour},
		{"emission: older than MaxLag whatever its emission", emission, ti(now-25*hour, now-25*hour+window), at(now), true, now - 25*hour + window + 24*hour, now - 25*hour},
		{"emission: just inside MaxLag", emission, ti(now-24*hour-window+1, now-24*hour+1), at(now - 1_000), false, now + 1, now - 24*hour - window + 1 + 1_000},
		{"emission: a first attempt with a longer deadline", emission, ti(backfill, backfill+3*window), at(now - 2*window), false, now + window, backfill + 2*window},
		{"emission: attempt 2 has one deadline from its emission", emission, attempt(backfill, 2), at(now - 10_000), false, now - 10_000 + window, backfill + 10_000},
		{"emission: attempt 2 past one deadline from its emission", emission, attempt(backfill, 2), at(now - window), true, now, backfill + window},
		{"emission: a live attempt 1 delivered an hour after its emission", emission, attempt(now-hour, 1), at(now - hour + window), true, now - hour + 2*window, now - window},
		{"clock: attempt 2 by its expires_at_ms", clock, attempt(now-2*window-1, 2), at(now), false, now + window - 1, now},
		{"emission: emitted after the clock (skew) counts no age", emission, ti(backfill, backfill+window), at(now + 3_000), false, now + 3_000 + window, backfill},
		{"emission unknown: the clock", emission, ti(backfill, backfill+window), time.Time{}, true, backfill + window, now},
		{"no created_at_ms: the clock", emission, ti(0, backfill+window), at(now), true, backfill + window, now},
		{"expires before created: the clock", emission, ti(backfill, backfill), at(now), true, backfill, now},
		{"no expires_at_ms never expires (clock)", clock, ti(backfill, 0), at(now), false, 0, now},
		{"no expires_at_ms never expires (emission)", emission, ti(backfill, 0), at(now), false, 0, now},
		{"saturated deadline", emission, ti(1, math.MaxInt64), at(now), false, math.MaxInt64, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.x.judge(tc.ti, tc.emitted, now)
			if v.Expired != tc.expired || v.DeadlineMs != tc.deadline || v.EventMs != tc.event {
				t.Fatalf("expired %v deadline %d event %d, want %v %d %d", v.Expired, v.DeadlineMs, v.EventMs, tc.expired, tc.deadline, tc.event)
			}
			if !v.Expired && tc.ti.GetExpiresAtMs() > 0 && v.EventMs >= tc.ti.GetExpiresAtMs() && v.Emission {
				t.Fatalf("an admitted intent's outcome at event time %d is past its deadline %d", v.EventMs, tc.ti.GetExpiresAtMs())
			}
		})
	}
}

func TestParseExpiry(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Expiry
		ok   bool
	}{
		{"clock", Expiry{Policy: ExpiryClock}, true},
		{"emission:24h", Expiry{Policy: ExpiryEmission, MaxLag: 24 * time.Hour}, true},
		{"emission:90m", Expiry{Policy: ExpiryEmission, MaxLag: 90 * time.Minute}, true},
		{"emission:8784h", Expiry{Policy: ExpiryEmission, MaxLag: 8784 * time.Hour}, true},
		{"emission:8785h", Expiry{}, false},
		{"emission", Expiry{}, false},
		{"emission:", Expiry{}, false},
		{"emission:0s", Expiry{}, false},
		{"emission:-1h", Expiry{}, false},
		{"emission:a day", Expiry{}, false},
		{"Clock", Expiry{}, false},
		{"", Expiry{}, false},
		{"receipt", Expiry{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseExpiry(tc.in)
			if tc.ok != (err == nil) || got != tc.want {
				t.Fatalf("ParseExpiry(%q) = %+v, %v", tc.in, got, err)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Fatalf("untyped error %v", err)
			}
		})
	}
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "dedup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, x := range []Expiry{{Policy: ExpiryEmission}, {Policy: ExpiryEmission, MaxLag: -time.Hour}, {Policy: "receipt"}, {MaxLag: time.Hour}} {
		if _, err := New(Options{Store: st, Expiry: x}); !errors.Is(err, ErrConfig) {
			t.Fatalf("New took expiry %+v: %v", x, err)
		}
	}
}

// FuzzParseExpiry: any value parses to a valid policy that prints back to itself, or is
// refused with ErrConfig.
func FuzzParseExpiry(f *testing.F) {
	for _, s := range []string{"clock", "emission:24h", "emission:1h30m", "emission", "emission:-5s", "emission:9999999h", "emission:1e3h", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := ParseExpiry(s)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if err := x.check(); err != nil {
			t.Fatalf("%q parsed to an invalid policy %+v: %v", s, x, err)
		}
		again, err := ParseExpiry(x.String())
		if err != nil || again != x {
			t.Fatalf("%q: %+v prints as %q, which parses to %+v, %v", s, x, x.String(), again, err)
		}
	})
}

// FuzzJudge: the clock policy is expires_at_ms against the clock; the emission policy never
// admits an intent MaxLag past its expires_at_ms, and an intent it admits by its emission
// gets an event time before its expires_at_ms, so its result reaches the activation before
// the activation's own deadline.
func FuzzJudge(f *testing.F) {
	f.Add(int64(1767225600000), int64(1767225900000), int64(1767240000000), int64(1767240010000), int64(86400), uint32(0))
	f.Add(int64(1767225600000), int64(1767226500000), int64(1767240000000), int64(1767240010000), int64(86400), uint32(2))
	f.Add(int64(1), int64(math.MaxInt64), int64(math.MinInt64), int64(math.MaxInt64), int64(1), uint32(math.MaxUint32))
	f.Add(int64(-5), int64(10), int64(0), int64(7), int64(3), uint32(1))
	f.Fuzz(func(t *testing.T, created, expires, emittedMs, nowMs, lagSec int64, attempt uint32) {
		ti := &pb.ToolIntent{CreatedAtMs: created, ExpiresAtMs: expires, Attempt: attempt}
		emitted := time.UnixMilli(emittedMs)
		c := Expiry{Policy: ExpiryClock}.judge(ti, emitted, nowMs)
		if c.Expired != (expires > 0 && nowMs >= expires) || c.EventMs != nowMs {
			t.Fatalf("clock: %+v", c)
		}
		lag := time.Duration(lagSec%(366*24*3600)) * time.Second
		if lag <= 0 {
			lag = time.Second
		}
		x := Expiry{Policy: ExpiryEmission, MaxLag: lag}
		v := x.judge(ti, emitted, nowMs)
		if expires > 0 && expires <= math.MaxInt64-lag.Milliseconds() && nowMs >= expires+lag.Milliseconds() && !v.Expired {
			t.Fatalf("admitted %d ms past expires_at_ms + MaxLag: %+v", nowMs-expires-lag.Milliseconds(), v)
		}
		if !v.Expired && v.Emission && v.EventMs >= expires {
			t.Fatalf("admitted with event time %d at or after expires_at_ms %d", v.EventMs, expires)
		}
		if !v.Emission && v != c {
			t.Fatalf("without an emission window the clock decides: %+v, clock %+v", v, c)
		}
	})
}
