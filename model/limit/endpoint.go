package limit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beamagents/beamagents/model"
)

// State is a circuit breaker's state.
type State int32

// Breaker states.
const (
	Closed   State = iota // attempts pass
	Open                  // attempts are held (or refused) until the cool-down ends
	HalfOpen              // one probe is in flight (or may start); others are held (or refused)
)

func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "unknown"
}

// Kind is what one attempt's end says about the endpoint.
type Kind uint8

// Outcome kinds.
const (
	// Answered: the server answered, whatever it said (a success, a refusal, a 4xx, a
	// malformed body): it is up.
	Answered Kind = iota
	// RateLimited: a 429. The server is up; a RetryAfter pauses the endpoint.
	RateLimited
	// Unavailable: a broken connection, a 5xx or the attempt's timeout.
	Unavailable
	// Abandoned: the caller went away before the attempt ended; it says nothing.
	Abandoned
)

// Outcome is how an attempt ended.
type Outcome struct {
	Kind Kind
	// RetryAfter is the wait the server asked for; it pauses the endpoint for every caller.
	RetryAfter time.Duration
	// Tokens is the usage the answer recorded (input and output); 0 keeps the estimate.
	Tokens int64
}

// Endpoint is the process's view of one endpoint. It is safe for concurrent use.
type Endpoint struct {
	key  Key
	gate gate

	mu          sync.Mutex
	cfg         Config
	rpm, tpm    bucket
	pausedUntil time.Time
	state       State
	failures    int // consecutive unavailability failures
	openedAt    time.Time
	// openFor is how long the breaker stays open from openedAt (see open); downSince is when
	// it opened after it was last closed.
	openFor   time.Duration
	downSince time.Time
	probing   bool
	// ramp, while positive, caps the attempts in flight after the breaker closed: it grows by
	// one with each answer (doubling per round trip) until it reaches the concurrency.
	ramp int
	// wake is closed (and cleared) when the breaker's state, its probe or the attempts in
	// flight change, for the callers it holds; nil while nobody is held.
	wake chan struct{}

	inFlight, waiting, held               atomic.Int64
	started, refused, rateLimited, opened atomic.Int64
	tokens                                atomic.Int64
}

var registry struct {
	mu sync.Mutex
	m  map[Key]*Endpoint
}

// For returns the process's Endpoint for k, created with c on first use. A later call with a
// different Config changes the endpoint's limits from then on; its breaker and counters stay.
func For(k Key, c Config) *Endpoint {
	c = c.Resolved()
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if e, ok := registry.m[k]; ok {
		e.reconfigure(c)
		return e
	}
	if registry.m == nil {
		registry.m = map[Key]*Endpoint{}
	}
	now := time.Now()
	e := &Endpoint{key: k, cfg: c, rpm: newBucket(c.RPM, now), tpm: newBucket(c.TPM, now)}
	e.gate.size = c.Concurrency
	registry.m[k] = e
	return e
}

// Lookup returns the process's Endpoint for k, if one was made.
func Lookup(k Key) (*Endpoint, bool) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	e, ok := registry.m[k]
	return e, ok
}

// Endpoints lists the process's endpoints by key.
func Endpoints() []*Endpoint {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	out := make([]*Endpoint, 0, len(registry.m))
	for _, e := range registry.m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *Endpoint) int {
		return cmp.Or(cmp.Compare(a.key.Kind, b.key.Kind), cmp.Compare(a.key.BaseURL, b.key.BaseURL), cmp.Compare(a.key.Model, b.key.Model))
	})
	return out
}

func (e *Endpoint) reconfigure(c Config) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c == e.cfg {
		return
	}
	now := time.Now()
	e.rpm.reconfigure(c.RPM, now)
	e.tpm.reconfigure(c.TPM, now)
	e.cfg = c
	e.gate.resize(c.Concurrency)
}

// Config returns the endpoint's limits, defaults filled in.
func (e *Endpoint) Config() Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg
}

// Key returns the endpoint's key.
func (e *Endpoint) Key() Key { return e.key }

// Permit is one admitted attempt; Done must be called exactly once when it ends.
type Permit struct {
	e      *Endpoint
	tokens int64
	probe  bool
	holds  bool // the caller is held, not refused, by an open breaker
	done   atomic.Bool
}

// Acquire waits until an attempt costing an estimated tokens may start: the endpoint is not
// paused, a place is free, the rate buckets cover it and the breaker admits it. While the
// breaker is open the attempt is held in its place, without a connection, until a probe
// succeeds (then the held attempts start paced, as the breaker's ramp lets them) or until
// Config.BreakerHoldMs passes, when it is refused with model.ErrCircuitOpen; a ctx whose
// deadline comes first ends the hold with the same refusal. With a negative BreakerHoldMs
// an open breaker refuses at once, as AcquireNow does. The end of ctx ends every wait with
// ctx's error.
func (e *Endpoint) Acquire(ctx context.Context, tokens int64) (*Permit, error) {
	return e.acquire(ctx, tokens, true)
}

// AcquireNow is Acquire for a caller that has somewhere else to go (a fallback chain's
// member before the last): an open breaker refuses at once with model.ErrCircuitOpen,
// reserving nothing.
func (e *Endpoint) AcquireNow(ctx context.Context, tokens int64) (*Permit, error) {
	return e.acquire(ctx, tokens, false)
}

func (e *Endpoint) acquire(ctx context.Context, tokens int64, hold bool) (*Permit, error) {
	hold = hold && e.Config().BreakerHoldMs >= 0
	if !hold {
		if err := e.check(); err != nil {
			return nil, err
		}
	}
	e.waiting.Add(1)
	defer e.waiting.Add(-1)
	if err := e.waitPause(ctx); err != nil {
		return nil, err
	}
	if err := e.gate.acquire(ctx); err != nil {
		return nil, err
	}
	p := &Permit{e: e, tokens: max(tokens, 0), holds: hold}
	h := holding{hold: hold}
	for {
		err := e.waitRate(ctx, p.tokens)
		if err == nil {
			if err = e.waitPause(ctx); err != nil {
				e.refund(p.tokens)
			}
		}
		if err == nil {
			var waited bool
			p.probe, waited, err = e.pass(ctx, &h)
			if err == nil && waited {
				// The attempt was held: its charge is taken again when it really starts.
				e.refund(p.tokens)
				continue
			}
			if err != nil {
				e.refund(p.tokens)
			}
		}
		if err != nil {
			e.gate.release()
			return nil, err
		}
		e.started.Add(1)
		return p, nil
	}
}

func (e *Endpoint) refusal(state State) error {
	e.refused.Add(1)
	return &model.Error{Code: model.CodeCircuitOpen, Detail: fmt.Sprintf("the circuit breaker of %s is %s", e.key, state)}
}

// check refuses at once while the breaker is open (or its probe is out), reserving nothing.
func (e *Endpoint) check() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.state == Open && time.Since(e.openedAt) < e.openFor:
		return e.refusal(Open)
	case e.state == HalfOpen && e.probing:
		return e.refusal(HalfOpen)
	}
	return nil
}

// holding is one attempt's stay in pass.
type holding struct {
	hold  bool      // an open breaker holds the attempt (else it refuses it)
	until time.Time // when the hold ends; zero until the breaker first held it
}

// pass is the breaker's decision for an attempt about to start: it admits it (probe reports
// that the attempt is the half-open breaker's one probe), refuses it, or holds it until the
// breaker's state changes and then reports waited, for the caller to take its charge again
// and ask anew.
func (e *Endpoint) pass(ctx context.Context, h *holding) (probe, waited bool, err error) {
	e.mu.Lock()
	now := time.Now()
	d, breaker, probe := e.decide(now)
	if d == 0 {
		e.inFlight.Add(1)
		e.mu.Unlock()
		return probe, false, nil
	}
	state := e.state
	if breaker {
		if !h.hold {
			defer e.mu.Unlock()
			return false, false, e.refusal(state)
		}
		if h.until.IsZero() {
			// Calls are held until the provider has been down for the hold, not each for a
			// hold of its own: the calls queued behind the held ones, a retry, a call that
			// carried a failed probe, are not held again in turn, and an outage fails every
			// call within one hold.
			h.until = e.downSince.Add(e.cfg.hold())
			if dl, ok := ctx.Deadline(); ok && dl.Before(h.until) {
				h.until = dl
			}
		}
		if !now.Before(h.until) {
			defer e.mu.Unlock()
			return false, false, e.holdRefusal(state)
		}
		d = min(d, h.until.Sub(now))
	}
	if e.wake == nil {
		e.wake = make(chan struct{})
	}
	wake := e.wake
	e.mu.Unlock()

	if breaker {
		e.held.Add(1)
		defer e.held.Add(-1)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-t.C:
	case <-ctx.Done():
		if !breaker || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return false, false, ctx.Err()
		}
	}
	if breaker && !time.Now().Before(h.until) {
		// Held to the end of its hold (or of its caller's deadline): refused as such.
		e.mu.Lock()
		defer e.mu.Unlock()
		return false, false, e.holdRefusal(state)
	}
	return false, true, nil
}

// decide says whether an attempt may start now (wait 0; probe: as the half-open breaker's
// one probe) or how long at most it waits for a change (breaker: because the breaker is open
// or its probe is out, rather than for the ramp). It moves an open breaker whose cool-down
// has passed to half-open and takes its probe; e.mu is held.
func (e *Endpoint) decide(now time.Time) (wait time.Duration, breaker, probe bool) {
	switch e.state {
	case Open:
		if left := e.openFor - now.Sub(e.openedAt); left > 0 {
			return left, true, false
		}
		e.state = HalfOpen
		fallthrough
	case HalfOpen:
		if e.probing {
			return e.cfg.cooldown(), true, false
		}
		e.probing = true
		return 0, false, true
	}
	if e.ramp > 0 && e.inFlight.Load() >= int64(e.ramp) {
		return e.cfg.cooldown(), false, false
	}
	return 0, false, false
}

func (e *Endpoint) holdRefusal(state State) error {
	e.refused.Add(1)
	return &model.Error{Code: model.CodeCircuitOpen, Detail: fmt.Sprintf("the circuit breaker of %s stayed %s while the call was held (up to %s, or the call's deadline)", e.key, state, e.cfg.hold())}
}

// notify wakes the held callers; e.mu is held.
func (e *Endpoint) notify() {
	if e.wake != nil {
		close(e.wake)
		e.wake = nil
	}
}

func (e *Endpoint) waitPause(ctx context.Context) error {
	for {
		e.mu.Lock()
		d := time.Until(e.pausedUntil)
		e.mu.Unlock()
		if d <= 0 {
			return nil
		}
		if err := Sleep(ctx, d); err != nil {
			return err
		}
	}
}

func (e *Endpoint) waitRate(ctx context.Context, tokens int64) error {
	e.mu.Lock()
	now := time.Now()
	d := max(e.rpm.take(1, now), e.tpm.take(float64(tokens), now))
	e.mu.Unlock()
	if err := Sleep(ctx, d); err != nil {
		e.refund(tokens)
		return err
	}
	return nil
}

func (e *Endpoint) refund(tokens int64) {
	e.mu.Lock()
	now := time.Now()
	e.rpm.give(1, now)
	e.tpm.give(float64(tokens), now)
	e.mu.Unlock()
}

// Sleep waits d or until ctx ends, whichever comes first, and returns ctx's error if it ended.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// HeldProbe reports that the attempt is the half-open breaker's one probe, taken by a caller
// the breaker holds (Acquire) rather than refuses: if it fails, the caller is held again.
func (p *Permit) HeldProbe() bool { return p.probe && p.holds }

// Done records how the attempt ended and frees its place. Calls after the first do nothing.
func (p *Permit) Done(o Outcome) {
	if p.done.Swap(true) {
		return
	}
	e := p.e
	defer e.gate.release()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.inFlight.Add(-1)
	defer e.notify()
	now := time.Now()
	charged := p.tokens
	if o.Tokens > 0 {
		// The bucket took the estimate; it now takes the difference (or gives it back).
		if d := o.Tokens - p.tokens; d > 0 {
			e.tpm.take(float64(d), now)
		} else {
			e.tpm.give(float64(-d), now)
		}
		charged = o.Tokens
	}
	e.tokens.Add(charged)
	if o.Kind == RateLimited {
		e.rateLimited.Add(1)
	}
	if o.RetryAfter > 0 {
		if until := now.Add(min(o.RetryAfter, MaxPause)); until.After(e.pausedUntil) {
			e.pausedUntil = until
		}
	}
	e.record(o.Kind, p.probe, now)
}

// record moves the breaker on an attempt's outcome; e.mu is held.
func (e *Endpoint) record(k Kind, probe bool, now time.Time) {
	if probe {
		e.probing = false
	}
	switch k {
	case Abandoned:
		return // a probe abandoned leaves the breaker half-open for the next attempt
	case Unavailable:
		e.failures++
		if e.cfg.BreakerFailures > 0 && (probe || e.state == Closed && e.failures >= e.cfg.BreakerFailures) {
			e.open(probe, now)
		}
	default:
		e.failures = 0
		switch {
		case probe || e.state == HalfOpen:
			// Closed again: the held attempts start as the ramp lets them, not all at once.
			e.state, e.ramp = Closed, 2
		case e.state == Open:
			// An attempt sent before the breaker opened was answered: the endpoint may be up
			// again, so the probe goes now rather than at the cool-down's end.
			e.state = HalfOpen
		case e.ramp > 0:
			if e.ramp++; e.ramp >= e.cfg.Concurrency {
				e.ramp = 0
			}
		}
	}
}

// open opens the breaker until its next probe: a sixteenth of the cool-down after it opened,
// then a quarter of the time since it first opened (the provider has been down that long),
// never more than the cool-down; each wait less up to a quarter at random so that the
// probes of many workers, or of one against a provider that comes and goes, do not fall in
// step; e.mu is held. A short burst of errors, which each probe meets once, thus costs the
// held calls a few seconds, while an outage of minutes is probed once per cool-down.
func (e *Endpoint) open(probeFailed bool, now time.Time) {
	if !probeFailed {
		e.downSince = now
	}
	cd := e.cfg.cooldown()
	wait := min(max(cd/16, now.Sub(e.downSince)/4, time.Millisecond), cd)
	e.openFor = wait - rand.N(wait/4+1)
	e.state, e.openedAt, e.ramp = Open, now, 0
	e.opened.Add(1)
}

// Stats is a snapshot of an endpoint's counters.
type Stats struct {
	Key   Key
	State State
	// InFlight counts the attempts holding a permit; Waiting the callers inside Acquire;
	// Held those of them an open breaker holds.
	InFlight, Waiting, Held int64
	// Started counts admitted attempts; Refused those the breaker refused; RateLimited the
	// 429s; Opened how often the breaker opened.
	Started, Refused, RateLimited, Opened int64
	// Tokens is the usage charged: as recorded by answers, else as estimated.
	Tokens int64
	// Paused reports that a Retry-After holds every caller back.
	Paused bool
}

// Stats returns the endpoint's counters and breaker state. An open breaker whose cool-down
// has passed reports HalfOpen: its next attempt is the probe.
func (e *Endpoint) Stats() Stats {
	e.mu.Lock()
	state := e.state
	if state == Open && time.Since(e.openedAt) >= e.openFor {
		state = HalfOpen
	}
	paused := time.Until(e.pausedUntil) > 0
	e.mu.Unlock()
	return Stats{
		Key: e.key, State: state, InFlight: e.inFlight.Load(), Waiting: e.waiting.Load(), Held: e.held.Load(),
		Started: e.started.Load(), Refused: e.refused.Load(), RateLimited: e.rateLimited.Load(), Opened: e.opened.Load(),
		Tokens: e.tokens.Load(), Paused: paused,
	}
}

// Estimate is the token cost charged when req starts: a quarter of its message bytes (a
// usual tokenizer's ratio for English) plus its output bound.
func Estimate(req *model.Request) int64 {
	return int64(model.RequestBytes(req))/4 + 1 + max(req.Sampling.MaxOutputTokens, 0)
}
