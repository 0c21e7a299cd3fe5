package limit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
)

const answer = `{"case":"support.reply","fields":{"text":"On its way."}}`

func request(tb testing.TB) *model.Request {
	s, err := support.Schema()
	if err != nil {
		tb.Fatal(err)
	}
	return &model.Request{
		Messages:       []model.Message{{Role: model.RoleUser, Content: "Where is my order A-1001?"}},
		ResponseSchema: s.ProviderJSONSchema(),
		SchemaDigest:   s.Digest(),
	}
}

var endpoints atomic.Int64

// client returns an OpenAI provider for baseURL behind an endpoint of its own.
func client(t *testing.T, baseURL string, lc limit.Config, attempts int) (*openai.Model, *limit.Endpoint) {
	t.Helper()
	// A key of its own: a later test's server may listen on a port an earlier one had.
	e := limit.For(limit.Key{Kind: "openai", BaseURL: baseURL, Model: fmt.Sprintf("test-model-%d", endpoints.Add(1))}, lc)
	return clientOf(t, baseURL, e, attempts), e
}

// clientOf returns an OpenAI provider for baseURL behind e.
func clientOf(t *testing.T, baseURL string, e *limit.Endpoint, attempts int) *openai.Model {
	t.Helper()
	m, err := openai.New(provider.Config{Model: "test-model", BaseURL: baseURL, MaxAttempts: attempts,
		Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Endpoint: e})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ok(int, []byte) llmtest.Reply {
	return llmtest.Reply{Text: answer, InputTokens: 30, OutputTokens: 12}
}

// until polls cond (no time is asserted: the bound only ends a test that would hang).
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 20000 {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// calls runs n concurrent calls and returns their errors once all have returned.
func calls(ctx context.Context, m model.Streamer, req *model.Request, n int) func() []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = m.Stream(ctx, req, func([]byte) error { return nil })
		})
	}
	return func() []error { wg.Wait(); return errs }
}

func TestConcurrencyCap(t *testing.T) {
	release := make(chan struct{})
	srv := llmtest.New(llmtest.OpenAI, func(n int, b []byte) llmtest.Reply { <-release; return ok(n, b) })
	defer srv.Close()
	m, e := client(t, srv.BaseURL(), limit.Config{Concurrency: 4}, 1)
	wait := calls(context.Background(), m, request(t), 40)
	until(t, "4 requests at the server and 36 callers waiting", func() bool { return srv.InFlight() == 4 && e.Stats().Waiting == 36 })
	close(release)
	for i, err := range wait() {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if srv.Peak() != 4 || len(srv.Requests()) != 40 {
		t.Fatalf("peak in flight %d, %d requests; want 4 and 40", srv.Peak(), len(srv.Requests()))
	}

	if st := e.Stats(); st.Started != 40 || st.InFlight != 0 || st.Waiting != 0 || st.Tokens != 40*42 {
		t.Fatalf("stats %+v", st)
	}
}

// A wave of calls that end together leaves its connections in the pool for the next wave
// (the standard transport keeps two per host and would open six more). The next wave starts
// once the transport has put each of the first wave's connections back in its pool: a call
// returns a moment before its connection is idle, and a request sent in that moment would
// rightly open a ninth.
func TestConnectionsAreKeptForTheNextWave(t *testing.T) {
	var release atomic.Pointer[chan struct{}]
	srv := llmtest.New(llmtest.OpenAI, func(n int, b []byte) llmtest.Reply { <-*release.Load(); return ok(n, b) })
	defer srv.Close()
	m, _ := client(t, srv.BaseURL(), limit.Config{Concurrency: 8}, 1)
	var idle atomic.Int64
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		PutIdleConn: func(err error) {
			if err == nil {
				idle.Add(1)
			}
		},
	})
	for wave := range 2 {
		ch := make(chan struct{})
		release.Store(&ch)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { _, errs[i] = m.Generate(ctx, request(t)) })
		}
		until(t, "8 requests at the server", func() bool { return srv.InFlight() == 8 })
		close(ch)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		until(t, "the wave's connections idle in the pool", func() bool { return idle.Load() == int64(8*(wave+1)) })
		if n := srv.Connections(); n != 8 {
			t.Fatalf("wave %d: %d connections, want the first wave's 8", wave, n)
		}
	}
}

func TestRateLimitsHoldCallersBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		lc   limit.Config
	}{
		{"one request a minute", limit.Config{RPM: 1}},
		// The first request is charged its estimate, then the 42 tokens its answer records: the
		// next waits for them at one token a second.
		{"sixty tokens a minute", limit.Config{TPM: 60}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.OpenAI, ok)
			defer srv.Close()
			m, e := client(t, srv.BaseURL(), tc.lc, 1)
			req := request(t)
			if _, err := m.Stream(context.Background(), req, func([]byte) error { return nil }); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			wait := calls(ctx, m, req, 5)
			until(t, "5 callers waiting", func() bool { return e.Stats().Waiting == 5 })
			cancel()
			for i, err := range wait() {
				if !errors.Is(err, model.ErrCancelled) {
					t.Errorf("call %d: %v, want model_cancelled", i, err)
				}
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("the server saw %d requests, want 1", n)
			}
			if st := e.Stats(); st.Tokens != 42 || st.Started != 1 {
				t.Fatalf("stats %+v: want the recorded 42 tokens of one request", st)
			}
		})
	}
}

func TestRetryAfterPausesEveryCaller(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		long   bool
	}{
		{"a minute's pause holds every later caller", map[string]string{"Retry-After": "60"}, true},
		{"a short pause ends for all of them", map[string]string{"Retry-After-Ms": "20"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.OpenAI, func(n int, b []byte) llmtest.Reply {
				if n == 0 {
					return llmtest.Reply{Status: 429, Header: tc.header}
				}
				return ok(n, b)
			})
			defer srv.Close()
			m, e := client(t, srv.BaseURL(), limit.Config{}, 1)
			req := request(t)
			if _, err := m.Generate(context.Background(), req); !errors.Is(err, model.ErrUnavailable) {
				t.Fatalf("429: %v", err)
			}
			if st := e.Stats(); !st.Paused || st.RateLimited != 1 {
				t.Fatalf("after the 429: %+v", st)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wait := calls(ctx, m, req, 8)
			if tc.long {
				until(t, "8 callers held by the pause", func() bool { return e.Stats().Waiting == 8 })
				cancel()
			}
			for i, err := range wait() {
				if tc.long && !errors.Is(err, model.ErrCancelled) || !tc.long && err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
			want := 1
			if !tc.long {
				want = 9
			}
			if n := len(srv.Requests()); n != want {
				t.Fatalf("the server saw %d requests, want %d", n, want)
			}
		})
	}
}

// With a negative hold the breaker refuses at once: the behaviour a fallback chain's members
// before the last get, and the breaker's states step by step.
func TestBreakerThatRefuses(t *testing.T) {
	var down atomic.Bool
	var status atomic.Int64
	gate := make(chan struct{}, 1)
	var gated atomic.Bool
	srv := llmtest.New(llmtest.OpenAI, func(n int, b []byte) llmtest.Reply {
		if gated.Load() {
			<-gate
		}
		if down.Load() {
			return llmtest.Reply{Status: int(status.Load())}
		}
		return ok(n, b)
	})
	defer srv.Close()
	// The breaker opens for a sixteenth of the cool-down (less up to a quarter), 75 ms.
	m, e := client(t, srv.BaseURL(), limit.Config{BreakerFailures: 3, BreakerCooldownMs: 1600, BreakerHoldMs: -1}, 1)
	req := request(t)
	call := func() error { _, err := m.Generate(context.Background(), req); return err }

	// 4xx answers are answers: they never open it.
	down.Store(true)
	status.Store(400)
	for range 5 {
		if err := call(); !errors.Is(err, model.ErrRejected) {
			t.Fatalf("400: %v", err)
		}
	}
	// Three 5xx in a row open it; the next call is refused without a request.
	status.Store(503)
	for range 3 {
		if err := call(); !errors.Is(err, model.ErrUnavailable) {
			t.Fatalf("503: %v", err)
		}
	}
	if err := call(); !errors.Is(err, model.ErrCircuitOpen) {
		t.Fatalf("open breaker: %v", err)
	}
	if st := e.Stats(); (st.State != limit.Open && st.State != limit.HalfOpen) || st.Opened != 1 || st.Refused == 0 || len(srv.Requests()) != 8 {
		t.Fatalf("after 3 failures: %+v, %d requests", st, len(srv.Requests()))
	}

	// After the cool-down one probe goes; it fails and the breaker opens again.
	until(t, "the cool-down ends", func() bool { return e.Stats().State == limit.HalfOpen })
	if err := call(); !errors.Is(err, model.ErrUnavailable) {
		t.Fatalf("failed probe: %v", err)
	}
	if st := e.Stats(); st.Opened != 2 || len(srv.Requests()) != 9 {
		t.Fatalf("after the failed probe: %+v", st)
	}

	// The next probe is held at the server: meanwhile every other call is refused. It
	// succeeds and the breaker closes.
	down.Store(false)
	until(t, "the second cool-down ends", func() bool { return e.Stats().State == limit.HalfOpen })
	gated.Store(true)
	probe := make(chan error)
	go func() { probe <- call() }()
	until(t, "the probe reaches the server", func() bool { return srv.InFlight() == 1 })
	for range 3 {
		if err := call(); !errors.Is(err, model.ErrCircuitOpen) {
			t.Fatalf("call beside the probe: %v", err)
		}
	}
	gated.Store(false)
	gate <- struct{}{}
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := call(); err != nil {
		t.Fatalf("closed breaker: %v", err)
	}
	if st := e.Stats(); st.State != limit.Closed || len(srv.Requests()) != 11 {
		t.Fatalf("after the probe: %+v, %d requests", st, len(srv.Requests()))
	}
}

// An endpoint where nothing listens opens its breaker; the calls it holds are refused when
// their hold ends, each after at most one attempt.
func TestBreakerOnRefusedConnections(t *testing.T) {
	m, e := client(t, llmtest.Refused(llmtest.OpenAI), limit.Config{BreakerFailures: 2, BreakerCooldownMs: 60000, BreakerHoldMs: 50}, 3)
	errs := calls(context.Background(), m, request(t), 50)()
	refused := 0
	for _, err := range errs {
		switch {
		case errors.Is(err, model.ErrCircuitOpen):
			refused++
		case !errors.Is(err, model.ErrUnavailable):
			t.Fatalf("%v", err)
		}
	}
	// At most Concurrency (64) attempts were under way when it opened: every later attempt
	// was held and then refused, so the refusals are not fewer than the calls whose attempts
	// came later.
	if st := e.Stats(); st.State != limit.Open || refused == 0 || st.Refused < int64(refused) || st.Held != 0 {
		t.Fatalf("stats %+v, %d refused", st, refused)
	}
}

func TestCallsWaitingForAPlaceHonourTheirContext(t *testing.T) {
	release := make(chan struct{})
	srv := llmtest.New(llmtest.OpenAI, func(n int, b []byte) llmtest.Reply { <-release; return ok(n, b) })
	defer srv.Close()
	m, e := client(t, srv.BaseURL(), limit.Config{Concurrency: 1}, 1)
	req := request(t)
	first := calls(context.Background(), m, req, 1)
	until(t, "the first request at the server", func() bool { return srv.InFlight() == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	waiting := calls(ctx, m, req, 10)
	until(t, "10 callers waiting", func() bool { return e.Stats().Waiting == 10 })
	cancel()
	for _, err := range waiting() {
		if !errors.Is(err, model.ErrCancelled) {
			t.Fatalf("%v", err)
		}
	}
	close(release)
	if err := first()[0]; err != nil {
		t.Fatal(err)
	}
	// The place is free again.
	if _, err := m.Generate(context.Background(), req); err != nil || len(srv.Requests()) != 2 {
		t.Fatalf("%v, %d requests", err, len(srv.Requests()))
	}
}

func TestRegistry(t *testing.T) {
	k := limit.Key{Kind: "openai", BaseURL: "http://registry.test/v1", Model: "m"}
	if _, ok := limit.Lookup(k); ok {
		t.Fatal("an endpoint before any For")
	}
	a := limit.For(k, limit.Config{Concurrency: 2})
	b := limit.For(k, limit.Config{Concurrency: 3})
	if found, ok := limit.Lookup(k); a != b || !ok || found != a || !slices.Contains(limit.Endpoints(), a) {
		t.Fatal("one endpoint per key")
	}
	// Resized from 2 to 3: three permits are granted at once.
	var permits []*limit.Permit
	for range 3 {
		p, err := a.Acquire(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		permits = append(permits, p)
	}
	if st := a.Stats(); st.InFlight != 3 || st.State != limit.Closed {
		t.Fatalf("%+v", st)
	}
	for _, p := range permits {
		p.Done(limit.Outcome{})
		p.Done(limit.Outcome{}) // a second Done does nothing
	}
	if st := a.Stats(); st.InFlight != 0 {
		t.Fatalf("%+v", st)
	}
}

// BenchmarkAcquire measures a permit's cost against the same loop without one.
func BenchmarkAcquire(b *testing.B) {
	ctx := context.Background()
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			_ = ctx.Err()
		}
	})
	for _, lc := range []struct {
		name string
		c    limit.Config
	}{{"concurrency", limit.Config{}}, {"rpm_tpm", limit.Config{RPM: 1 << 40, TPM: 1 << 50}}} {
		e := limit.For(limit.Key{Kind: "bench", BaseURL: lc.name}, lc.c)
		b.Run(lc.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p, err := e.Acquire(ctx, 100)
					if err != nil {
						b.Fatal(err)
					}
					p.Done(limit.Outcome{Tokens: 120})
				}
			})
		})
	}
}
