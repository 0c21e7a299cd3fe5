package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/records"
)

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
