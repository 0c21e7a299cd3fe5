// Package limit holds what a worker process knows about each model endpoint it calls: how many
// calls may be in flight, how many requests and tokens may start per minute, whether the
// endpoint asked everyone to wait (429 with Retry-After), and whether its circuit breaker is
// open. Every caller in the process (every DoFn instance, every bundle, every goroutine)
// reaches an endpoint through the one Endpoint that For returns for its Key, so the limits are
// the process's, not each caller's.
//
// Invariants:
//   - An Endpoint only delays or refuses an attempt before it starts. It never changes a
//     request or an answer, and nothing an activation decides reads its clock: outputs are the
//     same bytes whatever the limits, the load or the order calls complete in.
//   - At most Config.Concurrency attempts hold a permit at once; waiters are served in arrival
//     order.
//   - Requests and tokens per minute are token buckets refilled continuously at a minute's
//     rate, holding at most one second's share: an attempt starts when the bucket holds its
//     cost, so in any minute at most the limit plus one second's share starts. A request is
//     charged its estimated tokens when it starts and corrected by the usage its answer
//     records when it ends.
//   - A 429 with Retry-After pauses the endpoint for every caller until then (at most
//     MaxPause), not only the attempt that received it.
//   - The breaker counts consecutive unavailability failures of attempts (a broken
//     connection, a 5xx, an attempt's timeout); an answer of any kind, a 429 or another 4xx
//     included, resets the count. After BreakerFailures of them it opens until its probe:
//     a sixteenth of BreakerCooldown at first, then a quarter of the time since it first
//     opened, at most the cool-down (less up to a quarter at random); exactly one probe is
//     let through (half-open) and its outcome closes or reopens the breaker. An answer to an
//     attempt begun before it opened moves it to half-open at once.
//   - An open breaker holds an attempt in its place, without a connection, until the
//     breaker lets it start, or until BreakerHoldMs has passed since the breaker opened
//     after it was last closed (or the caller's deadline, if sooner), then refuses it with
//     model.ErrCircuitOpen (from then on at once, until a probe succeeds); AcquireNow, and a negative BreakerHoldMs, refuse at once.
//     After a probe succeeds, the attempts in flight are capped by a ramp that starts at two
//     and grows by one with each answer, until it reaches Concurrency.
//   - Every wait ends when the caller's context does.
//
// The rules in full: docs/models.md.
package limit
