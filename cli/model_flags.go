package cli

import (
	"flag"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/records"
)

// modelFlags choose the model when a pipeline is launched: the agent's own (scripted) or a
// hosted provider, which each worker creates at setup, reading the key from its reference;
// the limits every worker process keeps per endpoint; and the fallback models.
var modelFlags struct {
	once                            sync.Once
	provider, name, baseURL, apiKey *string
	timeout, callTimeout            *time.Duration
	maxAttempts                     *int
	stream                          *bool

	concurrency, breakerFailures *int
	rpm, tpm                     *int64
	breakerCooldown, breakerHold *time.Duration
	fallback, fallbackFile       *string
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

		modelFlags.concurrency = flag.Int("model_concurrency", limit.DefaultConcurrency, "model requests in flight at once per endpoint and worker process")
		modelFlags.rpm = flag.Int64("model_rpm", 0, "model requests started per minute per endpoint and worker process (0: unlimited)")
		modelFlags.tpm = flag.Int64("model_tpm", 0, "model tokens per minute per endpoint and worker process, estimated then as recorded (0: unlimited)")
		modelFlags.breakerFailures = flag.Int("model_breaker_failures", limit.DefaultBreakerFailures, "consecutive unavailability failures (broken connections, 5xx, timeouts) that open an endpoint's circuit breaker (negative: no breaker)")
		modelFlags.breakerCooldown = flag.Duration("model_breaker_cooldown", limit.DefaultBreakerCooldown, "the longest an open circuit breaker waits before a probe (the first goes after a sixteenth of it, the next ones after a quarter of the time it has been open)")
		modelFlags.breakerHold = flag.Duration("model_breaker_hold", 0, "how long an open circuit breaker holds a call, waiting for a probe to succeed, before it refuses it (0: four cool-downs; negative: refuse at once)")
		modelFlags.fallback = flag.String("model_fallback", "", "comma-separated fallback model ids, each optionally @BASE_URL, asked in order when the one before is unavailable (same provider and key)")
		modelFlags.fallbackFile = flag.String("model_fallback_file", "", "a JSON file listing fallback models: [{\"provider\":…,\"name\":…,\"base_url\":…,\"api_key\":\"env:VAR\"}], after --model_fallback's")
	})
}

// modelOptions reads the model flags, refusing a key given by value.
func modelOptions() (hosted.Options, error) {
	defineModelFlags()
	o := hosted.Options{
		Provider: *modelFlags.provider, Name: *modelFlags.name, BaseURL: *modelFlags.baseURL, APIKey: *modelFlags.apiKey,
		TimeoutMs: modelFlags.timeout.Milliseconds(), MaxAttempts: *modelFlags.maxAttempts, CallTimeoutMs: modelFlags.callTimeout.Milliseconds(), NoStream: !*modelFlags.stream,
		Limits: limit.Config{
			Concurrency: *modelFlags.concurrency, RPM: *modelFlags.rpm, TPM: *modelFlags.tpm,
			BreakerFailures: *modelFlags.breakerFailures, BreakerCooldownMs: modelFlags.breakerCooldown.Milliseconds(),
			BreakerHoldMs: holdMs(*modelFlags.breakerHold),
		},
	}
	if *modelFlags.concurrency <= 0 || *modelFlags.breakerCooldown <= 0 {
		return o, fmt.Errorf("--model_concurrency and --model_breaker_cooldown must be positive")
	}
	var err error
	if o.Fallback, err = fallbacks(*modelFlags.fallback, *modelFlags.fallbackFile); err != nil {
		return o, err
	}
	if err := o.Check(); err != nil {
		// The error never repeats the flag's value: it may be a key pasted by mistake.
		return o, fmt.Errorf("--model/--api_key/--model_fallback: %w", err)
	}
	return o, nil
}

// holdMs is --model_breaker_hold in milliseconds: a negative hold of less than a
// millisecond still refuses at once.
func holdMs(d time.Duration) int64 {
	if d < 0 {
		return min(d.Milliseconds(), -1)
	}
	return d.Milliseconds()
}

// fallbacks reads --model_fallback ("id[@base_url],…") and then --model_fallback_file.
func fallbacks(list, file string) ([]hosted.Fallback, error) {
	var out []hosted.Fallback
	for _, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		name, url, _ := strings.Cut(item, "@")
		if name == "" {
			return nil, fmt.Errorf("--model_fallback: %q names no model id", item)
		}
		out = append(out, hosted.Fallback{Name: name, BaseURL: url})
	}
	if file == "" {
		return out, nil
	}
	b, err := records.ReadCapped(file, maxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("--model_fallback_file: %w", err)
	}
	var listed []struct {
		Provider string `json:"provider"`
		Name     string `json:"name"`
		BaseURL  string `json:"base_url"`
		APIKey   string `json:"api_key"`
	}
	if err := jsontext.Decode(string(b), &listed, jsontext.DecodeOptions{DisallowUnknownFields: true}); err != nil {
		return nil, fmt.Errorf("--model_fallback_file %s: %w", file, err)
	}
	for _, f := range listed {
		out = append(out, hosted.Fallback{Provider: f.Provider, Name: f.Name, BaseURL: f.BaseURL, APIKey: f.APIKey})
	}
	return out, nil
}
