package anthropic

import (
	"encoding/json"
	"testing"

	ant "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/beamagents/beamagents/model"
)

// The Messages API's usage, as it reports it, read in the runtime's meaning: input_tokens
// leaves out the prompt tokens read from the prompt cache and those written to it, so the
// input tokens are the three summed and the cached ones the reads. Streamed, message_start
// gives the input counts and message_delta the output; a message_delta's counts are
// cumulative, so those it gives replace message_start's.
func TestUsageOfTheAPIsShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []string // one whole message, or a stream's message_start and message_delta
		want   model.Usage
	}{
		{"a message without cache counts", []string{`{"usage":{"input_tokens":182,"output_tokens":31}}`}, model.Usage{InputTokens: 182, OutputTokens: 31}},
		{"a message with zero cache counts",
			[]string{`{"usage":{"input_tokens":182,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":31}}`},
			model.Usage{InputTokens: 182, OutputTokens: 31}},
		{"a message read from the cache",
			[]string{`{"usage":{"input_tokens":21,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":31}}`},
			model.Usage{InputTokens: 2069, CachedInputTokens: 2048, OutputTokens: 31}},
		{"a message written to the cache",
			[]string{`{"usage":{"input_tokens":21,"cache_creation_input_tokens":2048,"cache_read_input_tokens":null,"output_tokens":31}}`},
			model.Usage{InputTokens: 2069, OutputTokens: 31}},
		{"a message both reading and writing",
			[]string{`{"usage":{"input_tokens":5,"cache_creation_input_tokens":300,"cache_read_input_tokens":1700,"output_tokens":9,"cache_creation":{"ephemeral_5m_input_tokens":300,"ephemeral_1h_input_tokens":0}}}`},
			model.Usage{InputTokens: 2005, CachedInputTokens: 1700, OutputTokens: 9}},
		{"a stream whose delta gives only its output", []string{
			`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":21,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":1}}}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":31}}`,
		}, model.Usage{InputTokens: 2069, CachedInputTokens: 2048, OutputTokens: 31}},
		{"a stream whose delta gives cumulative counts", []string{
			`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":21,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":21,"cache_creation_input_tokens":100,"cache_read_input_tokens":2048,"output_tokens":31}}`,
		}, model.Usage{InputTokens: 2169, CachedInputTokens: 2048, OutputTokens: 31}},
		{"a stream without cache counts", []string{
			`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":182,"output_tokens":1}}}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":31}}`,
		}, model.Usage{InputTokens: 182, OutputTokens: 31}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got model.Usage
			if len(tc.events) == 1 {
				var msg ant.Message
				if err := json.Unmarshal([]byte(tc.events[0]), &msg); err != nil {
					t.Fatal(err)
				}
				got = usage(msg.Usage)
			} else {
				resp, tokens := &model.Response{}, counts{}
				for _, e := range tc.events {
					var ev ant.MessageStreamEventUnion
					if err := json.Unmarshal([]byte(e), &ev); err != nil {
						t.Fatal(err)
					}
					noteMessage(resp, &tokens, ev)
				}
				got = resp.Usage
			}
			if got != tc.want {
				t.Fatalf("usage %+v, want %+v", got, tc.want)
			}
		})
	}
}
