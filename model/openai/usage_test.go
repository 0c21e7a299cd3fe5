package openai

import (
	"encoding/json"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/beamagents/beamagents/model"
)

// The Chat Completions usage, as the API reports it on a whole answer and on a stream's last
// chunk: prompt_tokens is the whole prompt and prompt_tokens_details.cached_tokens the part
// of it read from the prompt cache, absent on servers that do not report it.
func TestUsageOfTheAPIsShapes(t *testing.T) {
	for _, tc := range []struct {
		name, usage string
		want        model.Usage
	}{
		{"no details", `{"prompt_tokens":182,"completion_tokens":31,"total_tokens":213}`, model.Usage{InputTokens: 182, OutputTokens: 31}},
		{"no cache reads",
			`{"prompt_tokens":182,"completion_tokens":31,"total_tokens":213,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}}`,
			model.Usage{InputTokens: 182, OutputTokens: 31}},
		{"cache reads",
			`{"prompt_tokens":2006,"completion_tokens":300,"total_tokens":2306,"prompt_tokens_details":{"cached_tokens":1920,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`,
			model.Usage{InputTokens: 2006, CachedInputTokens: 1920, OutputTokens: 300}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c oai.ChatCompletion
			if err := json.Unmarshal([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[],"usage":`+tc.usage+`}`), &c); err != nil {
				t.Fatal(err)
			}
			var ch oai.ChatCompletionChunk
			if err := json.Unmarshal([]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":`+tc.usage+`}`), &ch); err != nil {
				t.Fatal(err)
			}
			if got := usage(c.Usage); got != tc.want {
				t.Errorf("completion usage %+v, want %+v", got, tc.want)
			}
			if got := usage(ch.Usage); got != tc.want {
				t.Errorf("chunk usage %+v, want %+v", got, tc.want)
			}
		})
	}
}
