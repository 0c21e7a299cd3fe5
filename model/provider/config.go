package provider

import (
	"fmt"
	"net/http"
	"time"

	"github.com/beamagents/beamagents/model/limit"
)

// Defaults of a Config.
const (
	DefaultTimeout     = 60 * time.Second
	DefaultMaxAttempts = 4
	// DefaultCallTimeout bounds a whole call: every attempt and the waits between them.
	DefaultCallTimeout = 5 * time.Minute
	DefaultBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff  = 20 * time.Second
	DefaultMaxTokens   = 4096
)

// Config configures a hosted provider.
type Config struct {
	// Model is the provider's model id, sent with every request that names none.
	Model string
	// BaseURL is the API's base URL; empty selects the vendor's. Any server speaking the same
	// API works (for OpenAI's: vLLM, llama.cpp server, Ollama, LiteLLM).
	BaseURL string
	// APIKey is a reference to the key: "env:VAR" or "file:PATH"; empty sends none.
	APIKey string
	// Timeout bounds each attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of one call; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// CallTimeout bounds the whole call, retries and backoff included; 0 means
	// DefaultCallTimeout.
	CallTimeout time.Duration
	// Backoff is the first retry's mean delay, doubled per attempt up to MaxBackoff; 0 means
	// the defaults.
	Backoff, MaxBackoff time.Duration
	// NoStream makes Stream a plain request whose whole text is delivered as one chunk, for
	// servers without server-sent events.
	NoStream bool
	// HTTPClient makes the requests; nil means a client of its own.
	HTTPClient *http.Client
	// Endpoint is the process's limiter and breaker of the endpoint (limit.For); nil means
	// none.
	Endpoint *limit.Endpoint
	// NoHold makes an open breaker refuse the call at once instead of holding it until a
	// probe succeeds: for a model with a fallback after it, which takes the call instead.
	NoHold bool
}

// Resolved returns c with its defaults filled in.
func (c Config) Resolved() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return c
}

// Client returns c.HTTPClient, or a client of its own whose pool keeps as many idle
// connections to the endpoint as its limits let calls be in flight (the standard transport
// keeps two, so a busy endpoint would open a connection per call).
func (c Config) Client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	n := limit.DefaultConcurrency
	if c.Endpoint != nil {
		n = c.Endpoint.Config().Concurrency
	}
	t.MaxIdleConnsPerHost = n
	t.MaxIdleConns = max(t.MaxIdleConns, n)
	return &http.Client{Transport: t}
}

// String renders c without its key's value (only the reference's kind is shown).
func (c Config) String() string {
	return fmt.Sprintf("model=%q base_url=%q api_key=%s timeout=%s max_attempts=%d call_timeout=%s stream=%t",
		c.Model, c.BaseURL, refKind(c.APIKey), c.Timeout, c.MaxAttempts, c.CallTimeout, !c.NoStream)
}
