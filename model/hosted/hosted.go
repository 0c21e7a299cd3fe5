package hosted

import (
	"fmt"
	"time"

	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/anthropic"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
)

// Provider names.
const (
	Scripted  = "scripted"
	OpenAI    = "openai"
	Anthropic = "anthropic"
)

// Providers lists the provider names.
func Providers() []string { return []string{Scripted, OpenAI, Anthropic} }

// Options choose and configure the model of a pipeline. The zero value keeps each agent's
// own model.
type Options struct {
	Provider      string // Scripted (or ""), OpenAI or Anthropic
	Name          string // the model id; empty keeps the agent's
	BaseURL       string
	APIKey        string // a reference: env:VAR or file:PATH
	TimeoutMs     int64  // per attempt; 0: provider.DefaultTimeout
	MaxAttempts   int    // 0: provider.DefaultMaxAttempts
	CallTimeoutMs int64  // the whole call, retries included; 0: provider.DefaultCallTimeout
	NoStream      bool   // plain requests instead of server-sent events
	// Limits bound every endpoint of this model (its own and each fallback's) per worker
	// process: calls in flight, requests and tokens per minute, the circuit breaker.
	Limits limit.Config
	// Pool, when set, keeps these limits apart from the process's other callers of the same
	// endpoints (limit.Key.Pool): a shadow agent's calls never take production's slots.
	Pool string
	// Fallback lists the models asked, in order, when the one before is unavailable or its
	// breaker is open.
	Fallback []Fallback
}

// Fallback is one fallback model. Empty fields take the primary model's values, except the
// base URL and key of another provider.
type Fallback struct {
	Provider string // OpenAI or Anthropic
	Name     string // the model id (required)
	BaseURL  string
	APIKey   string // a reference: env:VAR or file:PATH
}

// Hosted reports whether o names a hosted provider.
func (o Options) Hosted() bool { return o.Provider != "" && o.Provider != Scripted }

// Check validates o without reading the key.
func (o Options) Check() error {
	switch o.Provider {
	case "", Scripted, OpenAI, Anthropic:
	default:
		return fmt.Errorf("unknown model provider %q (want one of %v)", o.Provider, Providers())
	}
	if o.TimeoutMs < 0 || o.MaxAttempts < 0 || o.CallTimeoutMs < 0 {
		return fmt.Errorf("model timeout and attempts must not be negative")
	}
	if err := o.Limits.Check(); err != nil {
		return err
	}
	if len(o.Fallback) > 0 && !o.Hosted() {
		return fmt.Errorf("a model fallback needs a hosted model (--model openai or anthropic)")
	}
	for i, f := range o.Fallback {
		fo := o.fallback(f)
		switch {
		case f.Name == "":
			return fmt.Errorf("model fallback %d has no model id", i+1)
		case fo.Provider != OpenAI && fo.Provider != Anthropic:
			return fmt.Errorf("model fallback %d: unknown provider %q (want %s or %s)", i+1, fo.Provider, OpenAI, Anthropic)
		}
		if err := provider.CheckKeyRef(fo.APIKey); err != nil {
			return fmt.Errorf("model fallback %d: %w", i+1, err)
		}
		if err := provider.CheckBaseURL(fo.Provider, fo.BaseURL); err != nil {
			return fmt.Errorf("model fallback %d: %w", i+1, err)
		}
	}
	if o.Hosted() {
		if err := provider.CheckBaseURL(o.Provider, o.BaseURL); err != nil {
			return err
		}
	}
	return provider.CheckKeyRef(o.APIKey)
}

// fallback is o with f's fields in place of its own, and no fallbacks. The base URL and key
// of another provider are never the primary's.
func (o Options) fallback(f Fallback) Options {
	other := f.Provider != "" && f.Provider != o.Provider
	o.Fallback = nil
	o.Name = f.Name
	if other {
		o.Provider = f.Provider
	}
	if f.BaseURL != "" || other {
		o.BaseURL = f.BaseURL
	}
	if f.APIKey != "" || other {
		o.APIKey = f.APIKey
	}
	return o
}

// Config is o as a provider configuration.
func (o Options) Config() provider.Config {
	return provider.Config{
		Model: o.Name, BaseURL: o.BaseURL, APIKey: o.APIKey,
		Timeout: time.Duration(o.TimeoutMs) * time.Millisecond, MaxAttempts: o.MaxAttempts, CallTimeout: time.Duration(o.CallTimeoutMs) * time.Millisecond, NoStream: o.NoStream,
	}
}

// Endpoint returns the process's limiter of o's endpoint (limit.For).
func (o Options) Endpoint() *limit.Endpoint {
	return limit.For(limit.Key{Kind: o.Provider, BaseURL: o.BaseURL, Model: o.Name, Pool: o.Pool}, o.Limits)
}

// New returns o's provider (reading its keys) behind its endpoint's limits, and behind it its
// fallbacks in order; nil for Scripted.
func New(o Options) (model.Streamer, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if !o.Hosted() {
		return nil, nil
	}
	first, err := newOne(o, len(o.Fallback) > 0)
	if err != nil || len(o.Fallback) == 0 {
		return first, err
	}
	chain := []model.Named{{Name: o.Name, Model: first}}
	for i, f := range o.Fallback {
		// Every model but the last has another after it: its open breaker passes the call on
		// at once rather than holding it.
		m, err := newOne(o.fallback(f), i < len(o.Fallback)-1)
		if err != nil {
			return nil, err
		}
		chain = append(chain, model.Named{Name: f.Name, Model: m})
	}
	return model.NewFallback(chain...)
}

func newOne(o Options, noHold bool) (model.Streamer, error) {
	c := o.Config()
	c.Endpoint, c.NoHold = o.Endpoint(), noHold
	if o.Provider == Anthropic {
		return anthropic.New(c)
	}
	return openai.New(c)
}
