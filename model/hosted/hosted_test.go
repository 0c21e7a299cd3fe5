package hosted_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
)

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      hosted.Options
		ok     bool
		hosted bool
	}{
		{"zero keeps the agent's model", hosted.Options{}, true, false},
		{"scripted", hosted.Options{Provider: hosted.Scripted}, true, false},
		{"openai with an env reference", hosted.Options{Provider: hosted.OpenAI, APIKey: "env:K"}, true, true},
		{"anthropic with a file reference", hosted.Options{Provider: hosted.Anthropic, APIKey: "file:/run/key"}, true, true},
		{"a key by value", hosted.Options{Provider: hosted.OpenAI, APIKey: "sk-live-abc"}, false, true},
		{"unknown provider", hosted.Options{Provider: "gemini"}, false, true},
		{"negative attempts", hosted.Options{Provider: hosted.OpenAI, MaxAttempts: -1}, false, true},
		{"limits", hosted.Options{Provider: hosted.OpenAI, Limits: limit.Config{Concurrency: 8, RPM: 60, TPM: 1000}}, true, true},
		{"negative rpm", hosted.Options{Provider: hosted.OpenAI, Limits: limit.Config{RPM: -1}}, false, true},
		{"a fallback", hosted.Options{Provider: hosted.OpenAI, Fallback: []hosted.Fallback{{Name: "small"}}}, true, true},
		{"a fallback without a model id", hosted.Options{Provider: hosted.OpenAI, Fallback: []hosted.Fallback{{BaseURL: "http://x"}}}, false, true},
		{"a fallback of another provider with a key by value", hosted.Options{Provider: hosted.OpenAI,
			Fallback: []hosted.Fallback{{Provider: hosted.Anthropic, Name: "c", APIKey: "sk-live-abc"}}}, false, true},
		{"a fallback of an unknown provider", hosted.Options{Provider: hosted.OpenAI, Fallback: []hosted.Fallback{{Provider: "gemini", Name: "g"}}}, false, true},
		{"a fallback of the scripted model", hosted.Options{Fallback: []hosted.Fallback{{Name: "g"}}}, false, false},
	} {
		err := tc.o.Check()
		if (err == nil) != tc.ok || tc.o.Hosted() != tc.hosted {
			t.Errorf("%s: Check %v, Hosted %v", tc.name, err, tc.o.Hosted())
		}
		if err != nil && strings.Contains(err.Error(), "sk-live-abc") {
			t.Errorf("%s: the error repeats the key", tc.name)
		}
	}
}

func TestNew(t *testing.T) {
	if m, err := hosted.New(hosted.Options{}); m != nil || err != nil {
		t.Fatalf("scripted: %v %v", m, err)
	}
	_, err := hosted.New(hosted.Options{Provider: hosted.OpenAI, APIKey: "env:BEAMAGENTS_SURELY_UNSET_KEY"})
	if !errors.Is(err, model.ErrCredentials) || !strings.Contains(err.Error(), "BEAMAGENTS_SURELY_UNSET_KEY") {
		t.Fatalf("unset key: %v", err)
	}
	t.Setenv("BEAMAGENTS_HOSTED_KEY", "sk-test")
	for _, p := range []string{hosted.OpenAI, hosted.Anthropic} {
		if m, err := hosted.New(hosted.Options{Provider: p, APIKey: "env:BEAMAGENTS_HOSTED_KEY"}); m == nil || err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
