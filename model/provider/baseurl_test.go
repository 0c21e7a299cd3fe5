package provider_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/model/provider"
)

func TestCheckBaseURL(t *testing.T) {
	for _, tc := range []struct {
		api, url string
		ok       bool
	}{
		{"openai", "", true},
		{"openai", "http://127.0.0.1:8080/v1", true},
		{"openai", "https://api.openai.com/v1/", true},
		{"openai", "https://gateway.example/openai/v1", true},
		{"openai", "http://[::1]:8080/v1", true},
		{"anthropic", "https://api.anthropic.com", true},
		{"anthropic", "http://127.0.0.1:8081/", true},
		{"anthropic", "http://127.0.0.1:8081/proxy", true},

		{"openai", "http://127.0.0.1:/v1", false},         // empty port
		{"openai", "http://127.0.0.1:0/v1", false},        // port 0
		{"openai", "http://127.0.0.1:65536/v1", false},    // out of range
		{"openai", "http://127.0.0.1:80a/v1", false},      // not a number
		{"openai", "http://:8080/v1", false},              // no host name
		{"openai", "ftp://127.0.0.1/v1", false},           // scheme
		{"openai", "grpc://127.0.0.1:8080", false},        // scheme
		{"openai", "127.0.0.1:8080/v1", false},            // no scheme
		{"openai", "not-a-url", false},                    // relative
		{"openai", "http:127.0.0.1", false},               // opaque
		{"openai", "http://127.0.0.1:8080/v1?x=1", false}, // query
		{"openai", "http://127.0.0.1:8080/v1?", false},    // empty query
		{"openai", "http://127.0.0.1:8080/v1#top", false},
		{"openai", "http://127.0.0.1:8080/v1/chat/completions", false},
		{"openai", "http://127.0.0.1:8080/v1/responses/", false},
		{"anthropic", "https://api.anthropic.com/v1/messages", false},
		{"anthropic", "https://api.anthropic.com/v1", false},
		{"anthropic", "https://api.anthropic.com/v1/", false},
	} {
		err := provider.CheckBaseURL(tc.api, tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckBaseURL(%s, %q) = %v, want ok %v", tc.api, tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, provider.ErrBaseURL) {
			t.Errorf("CheckBaseURL(%s, %q) = %v, not ErrBaseURL", tc.api, tc.url, err)
		}
	}
}

// The refusal never repeats the URL, which may carry credentials.
func TestCheckBaseURLKeepsTheURLOut(t *testing.T) {
	for _, u := range []string{"http://user:s3cret-token@127.0.0.1:/v1", "http://h/v1?key=s3cret-token", "http://h:8080/v1#s3cret-token", "http://h:s3cret-token/v1", "s3cret-token"} {
		if err := provider.CheckBaseURL("openai", u); err == nil || strings.Contains(err.Error(), "s3cret-token") {
			t.Errorf("CheckBaseURL(%q) = %v", u, err)
		}
	}
}

func FuzzCheckBaseURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/v1", "http://127.0.0.1:/v1", "https://h/v1/messages", "x", "http://[::1]:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, api := range []string{"openai", "anthropic"} {
			if err := provider.CheckBaseURL(api, s); err != nil && !errors.Is(err, provider.ErrBaseURL) {
				t.Fatalf("%q: untyped %v", s, err)
			}
		}
	})
}
