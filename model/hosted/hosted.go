package hosted

import (
	"fmt"
	"time"

	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/anthropic"
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
	return provider.CheckKeyRef(o.APIKey)
}

// Config is o as a provider configuration.
func (o Options) Config() provider.Config {
	return provider.Config{
		Model: o.Name, BaseURL: o.BaseURL, APIKey: o.APIKey,
		Timeout: time.Duration(o.TimeoutMs) * time.Millisecond, MaxAttempts: o.MaxAttempts, CallTimeout: time.Duration(o.CallTimeoutMs) * time.Millisecond, NoStream: o.NoStream,
	}
}

// New returns o's provider (reading its key), or nil for Scripted.
func New(o Options) (model.Streamer, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	switch o.Provider {
	case OpenAI:
		return openai.New(o.Config())
	case Anthropic:
		return anthropic.New(o.Config())
	}
	return nil, nil
}
