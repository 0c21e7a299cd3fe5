package cli

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/provider"
)

// modelFlags choose the model when a pipeline is launched: the agent's own (scripted) or a
// hosted provider, which each worker creates at setup, reading the key from its reference.
var modelFlags struct {
	once                            sync.Once
	provider, name, baseURL, apiKey *string
	timeout, callTimeout            *time.Duration
	maxAttempts                     *int
	stream                          *bool
}

func defineModelFlags() {
	modelFlags.once.Do(func() {
		modelFlags.provider = flag.String("model", hosted.Scripted, "model provider: "+strings.Join(hosted.Providers(), ", ")+" (scripted keeps the agent's own model)")
		modelFlags.name = flag.String("model_name", "", "the provider's model id (default: the agent's)")
		modelFlags.baseURL = flag.String("base_url", "", "the API's base URL, for any compatible server (for example http://127.0.0.1:8080/v1)")
		modelFlags.apiKey = flag.String("api_key", "", "reference to the API key, read on the workers: env:VAR or file:PATH (never the key itself)")
		modelFlags.timeout = flag.Duration("model_timeout", provider.DefaultTimeout, "deadline of each model request attempt")
		modelFlags.callTimeout = flag.Duration("model_call_timeout", provider.DefaultCallTimeout, "deadline of a whole model call, its retries and backoff included")
		modelFlags.maxAttempts = flag.Int("model_max_attempts", provider.DefaultMaxAttempts, "attempts per model call (retries only on 429, 5xx, broken connections and timeouts)")
		modelFlags.stream = flag.Bool("model_stream", true, "stream model answers (server-sent events); false for servers without streaming")
	})
}

// modelOptions reads the model flags, refusing a key given by value.
func modelOptions() (hosted.Options, error) {
	defineModelFlags()
	o := hosted.Options{
		Provider: *modelFlags.provider, Name: *modelFlags.name, BaseURL: *modelFlags.baseURL, APIKey: *modelFlags.apiKey,
		TimeoutMs: modelFlags.timeout.Milliseconds(), MaxAttempts: *modelFlags.maxAttempts, CallTimeoutMs: modelFlags.callTimeout.Milliseconds(), NoStream: !*modelFlags.stream,
	}
	if err := o.Check(); err != nil {
		// The error never repeats the flag's value: it may be a key pasted by mistake.
		return o, fmt.Errorf("--model/--api_key: %w", err)
	}
	return o, nil
}
