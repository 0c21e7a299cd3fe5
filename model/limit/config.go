package limit

import (
	"fmt"
	"time"
)

// Defaults of a Config.
const (
	// DefaultConcurrency is the in-flight cap per endpoint and worker process: enough to keep
	// a provider busy while activations wait on it, well under what hosted APIs accept from one
	// client.
	DefaultConcurrency = 64
	// DefaultBreakerFailures consecutive unavailability failures open the breaker.
	DefaultBreakerFailures = 5
	// DefaultBreakerCooldown is the longest an open breaker waits before a probe.
	DefaultBreakerCooldown = 30 * time.Second
	// DefaultBreakerHolds is how many cool-downs an open breaker holds calls before it
	// refuses them (when BreakerHoldMs is 0): long enough for many probes, short enough
	// that an outage fails its calls within minutes.
	DefaultBreakerHolds = 4
	// MaxPause bounds the pause a Retry-After can impose on an endpoint.
	MaxPause = 2 * time.Minute
)

// Config bounds the calls of one endpoint. It is plain data that travels inside a pipeline;
// the zero value selects the defaults and no rate limits.
type Config struct {
	// Concurrency caps the attempts in flight; 0 means DefaultConcurrency.
	Concurrency int `json:"concurrency,omitempty"`
	// RPM caps the requests started per minute; 0 means unlimited.
	RPM int64 `json:"rpm,omitempty"`
	// TPM caps the tokens (estimated, then as recorded) per minute; 0 means unlimited.
	TPM int64 `json:"tpm,omitempty"`
	// BreakerFailures is how many consecutive unavailability failures open the breaker; 0
	// means DefaultBreakerFailures, negative disables the breaker.
	BreakerFailures int `json:"breaker_failures,omitempty"`
	// BreakerCooldownMs is the longest an open breaker waits before a probe (the first goes
	// after a sixteenth of it); 0 means DefaultBreakerCooldown.
	BreakerCooldownMs int64 `json:"breaker_cooldown_ms,omitempty"`
	// BreakerHoldMs is how long, from when it opened after it was last closed, an open
	// breaker holds calls waiting for a probe to succeed before it refuses them; 0 means
	// DefaultBreakerHolds cool-downs, negative refuses at once.
	BreakerHoldMs int64 `json:"breaker_hold_ms,omitempty"`
}

// Check validates c.
func (c Config) Check() error {
	if c.Concurrency < 0 || c.RPM < 0 || c.TPM < 0 || c.BreakerCooldownMs < 0 {
		return fmt.Errorf("model concurrency, rpm, tpm and breaker cool-down must not be negative")
	}
	return nil
}

// Resolved returns c with its defaults filled in.
func (c Config) Resolved() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.BreakerFailures == 0 {
		c.BreakerFailures = DefaultBreakerFailures
	}
	if c.BreakerCooldownMs <= 0 {
		c.BreakerCooldownMs = DefaultBreakerCooldown.Milliseconds()
	}
	if c.BreakerHoldMs == 0 {
		c.BreakerHoldMs = DefaultBreakerHolds * c.BreakerCooldownMs
	}
	return c
}

func (c Config) cooldown() time.Duration {
	return time.Duration(c.BreakerCooldownMs) * time.Millisecond
}

func (c Config) hold() time.Duration {
	return time.Duration(max(c.BreakerHoldMs, 0)) * time.Millisecond
}

// Key names an endpoint: the provider's API kind, its base URL and the model id asked. Pool,
// when set, gives its callers their own limits on the same endpoint, apart from the
// process's other callers (a shadow agent's, which must never take production's slots).
type Key struct {
	Kind    string `json:"kind"`
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	Pool    string `json:"pool,omitempty"`
}

func (k Key) String() string {
	if k.Pool != "" {
		return fmt.Sprintf("%s %s %s (%s)", k.Kind, k.BaseURL, k.Model, k.Pool)
	}
	return fmt.Sprintf("%s %s %s", k.Kind, k.BaseURL, k.Model)
}
