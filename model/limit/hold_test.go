package limit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/limit"
)

// slow answers like a provider under load: after its latency.
func slow(latency time.Duration) func(int, []byte) llmtest.Reply {
	return func(n int, b []byte) llmtest.Reply { time.Sleep(latency); return ok(n, b) }
}

// noErrors fails t for each call that did not succeed.
func noErrors(t *testing.T, errs []error) {
	t.Helper()
	failed := 0
	for _, err := range errs {
		if err != nil {
			if failed++; failed <= 3 {
				t.Errorf("%v", err)
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d calls failed", failed, len(errs))
	}
}

// A burst of errors opens the breaker; the calls it meets wait for the probe instead of
// failing, and every call is answered.
func TestBreakerHoldsCallsThroughABurst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lc    limit.Config
		serve func(answer func(int, []byte) llmtest.Reply) *llmtest.Server
	}{
		{"10 times 503, answers in flight bring the probe forward", limit.Config{Concurrency: 16, BreakerCooldownMs: 60000},
			func(a func(int, []byte) llmtest.Reply) *llmtest.Server {
				return llmtest.New(llmtest.OpenAI, llmtest.Failing(10, 503, a))
			}},
		// Six: the breaker opens on the fifth and its first probe fails, so no call can spend
		// its four attempts on them.
		{"6 times 503 with nothing else in flight: the probe after the cool-down", limit.Config{Concurrency: 4, BreakerCooldownMs: 100},
			func(a func(int, []byte) llmtest.Reply) *llmtest.Server {
				return llmtest.New(llmtest.OpenAI, llmtest.Failing(6, 503, a))
			}},
		{"the first 10 connections reset", limit.Config{Concurrency: 16, BreakerCooldownMs: 100},
			func(a func(int, []byte) llmtest.Reply) *llmtest.Server {
				return llmtest.NewResetting(llmtest.OpenAI, 10, a)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.serve(slow(20 * time.Millisecond))
			defer srv.Close()
			m, e := client(t, srv.BaseURL(), tc.lc, 4)
			noErrors(t, calls(context.Background(), m, request(t), 100)())
			if st := e.Stats(); st.Opened == 0 || st.Refused != 0 || st.State != limit.Closed || st.Held != 0 || st.InFlight != 0 {
				t.Fatalf("stats %+v: want the breaker opened, nothing refused, closed again", st)
			}
		})
	}
}

// A provider that flaps (down, up, down, up) loses no call.
func TestBreakerHoldsCallsWhileTheProviderFlaps(t *testing.T) {
	srv := llmtest.New(llmtest.OpenAI, llmtest.Flapping(time.Now(), 150*time.Millisecond, 150*time.Millisecond, 503, slow(5*time.Millisecond)))
	defer srv.Close()
	m, e := client(t, srv.BaseURL(), limit.Config{Concurrency: 8, BreakerCooldownMs: 50, BreakerHoldMs: 10000}, 4)
	noErrors(t, calls(context.Background(), m, request(t), 200)())
	if st := e.Stats(); st.Opened == 0 || st.Refused != 0 {
		t.Fatalf("stats %+v: want the breaker opened and nothing refused", st)
	}
}

// Once the probe succeeds the held calls start as the ramp lets them: two, then one more
// with each answer, not all at once.
func TestHeldCallsStartPaced(t *testing.T) {
	var up, answered atomic.Bool
	release := make(chan struct{})
	srv := llmtest.New(llmtest.OpenAI, func(n int, b []byte) llmtest.Reply {
		if !up.Load() {
			return llmtest.Reply{Status: 503}
		}
		if answered.Swap(true) {
			<-release // every call after the successful probe waits at the server
		}
		return ok(n, b)
	})
	defer srv.Close()
	// A probe that fails (the cool-down ended before the server was up) reopens the breaker
	// and its call is held again: it has attempts to spare.
	lc := limit.Config{Concurrency: 16, BreakerFailures: 1, BreakerCooldownMs: 100}
	once, e := client(t, srv.BaseURL(), lc, 1)
	m := clientOf(t, srv.BaseURL(), e, 4)
	req := request(t)
	if _, err := once.Generate(context.Background(), req); !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("first call: %v", err)
	}
	wait := calls(context.Background(), m, req, 12)
	until(t, "12 calls held", func() bool { return e.Stats().Held == 12 || e.Stats().Held == 11 })
	up.Store(true) // the next probe succeeds
	until(t, "two calls at the server after the probe", func() bool { return srv.InFlight() == 2 })
	time.Sleep(50 * time.Millisecond) // room for a third, if the ramp let one through
	if n := srv.InFlight(); n != 2 {
		t.Fatalf("%d calls at the server, want the ramp's 2", n)
	}
	release <- struct{}{}
	until(t, "three calls at the server after one answer", func() bool { return srv.InFlight() == 3 })
	close(release)
	noErrors(t, wait())
}

// An outage outlasting the hold refuses each held call when its hold ends, as a circuit
// refusal; a call whose own deadline comes first is refused the same way at its deadline.
func TestHoldEndsInARefusal(t *testing.T) {
	url := llmtest.Refused(llmtest.OpenAI)
	m, e := client(t, url, limit.Config{BreakerFailures: 1, BreakerCooldownMs: 60000, BreakerHoldMs: 30}, 1)
	req := request(t)
	if _, err := m.Generate(context.Background(), req); !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("first call: %v", err)
	}
	for i, err := range calls(context.Background(), m, req, 20)() {
		if !errors.Is(err, model.ErrCircuitOpen) {
			t.Fatalf("call %d: %v, want model_circuit_open", i, err)
		}
	}
	m2, e2 := client(t, llmtest.Refused(llmtest.OpenAI), limit.Config{BreakerFailures: 1, BreakerCooldownMs: 60000}, 1)
	if _, err := m2.Generate(context.Background(), req); !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("first call: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := m2.Generate(ctx, req); !errors.Is(err, model.ErrCircuitOpen) {
		t.Fatalf("a call with a deadline: %v, want model_circuit_open", err)
	}
	for _, st := range []limit.Stats{e.Stats(), e2.Stats()} {
		if st.Held != 0 || st.Waiting != 0 || st.InFlight != 0 || st.Started != 1 {
			t.Fatalf("stats %+v", st)
		}
	}
}

// A caller that leaves while held is let go with its context's error.
func TestHeldCallsHonourTheirContext(t *testing.T) {
	m, e := client(t, llmtest.Refused(llmtest.OpenAI), limit.Config{BreakerFailures: 1, BreakerCooldownMs: 60000}, 1)
	req := request(t)
	m.Generate(context.Background(), req)
	ctx, cancel := context.WithCancel(context.Background())
	wait := calls(ctx, m, req, 5)
	until(t, "5 calls held", func() bool { return e.Stats().Held == 5 })
	cancel()
	for i, err := range wait() {
		if !errors.Is(err, model.ErrCancelled) {
			t.Fatalf("call %d: %v, want model_cancelled", i, err)
		}
	}
	if st := e.Stats(); st.Held != 0 || st.Waiting != 0 {
		t.Fatalf("stats %+v", st)
	}
}
