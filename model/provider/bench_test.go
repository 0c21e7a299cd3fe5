package provider_test

import (
	"context"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// BenchmarkCall compares one model call through the runtime's OpenAI provider (profile,
// retry wrapper, typed errors; streamed: every delta through the streaming canonicalizer and
// decoder) with a bare SDK call to the same loopback server asking the same thing. The
// server's time is in both, so the ratio bounds the runtime's overhead from above.
func BenchmarkCall(b *testing.B) {
	reply := llmtest.Reply{Text: spacedRefund, ChunkBytes: 8, InputTokens: 200, OutputTokens: 40}
	for _, streamed := range []bool{false, true} {
		mode := map[bool]string{false: "plain", true: "stream"}[streamed]
		b.Run("sdk/"+mode, func(b *testing.B) {
			srv := llmtest.New(llmtest.OpenAI, always(reply))
			defer srv.Close()
			client := oai.NewClient(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey(testKey), option.WithMaxRetries(0))
			req := request(b)
			params := oai.ChatCompletionNewParams{
				Model:    shared.ChatModel(req.Model),
				Messages: []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(req.Messages[0].Content), oai.UserMessage(req.Messages[1].Content)},
				ResponseFormat: oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
					JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "support_proposal", Strict: oai.Bool(true), Schema: req.ResponseSchema},
				}},
			}
			b.ResetTimer()
			for range b.N {
				if !streamed {
					c, err := client.Chat.Completions.New(context.Background(), params)
					if err != nil || c.Choices[0].Message.Content == "" {
						b.Fatal(err)
					}
					continue
				}
				st := client.Chat.Completions.NewStreaming(context.Background(), params)
				var text strings.Builder
				for st.Next() {
					if ch := st.Current(); len(ch.Choices) > 0 {
						text.WriteString(ch.Choices[0].Delta.Content)
					}
				}
				if st.Err() != nil || text.Len() == 0 {
					b.Fatal(st.Err())
				}
				st.Close()
			}
		})
		b.Run("runtime/"+mode, func(b *testing.B) {
			srv := llmtest.New(llmtest.OpenAI, always(reply))
			defer srv.Close()
			b.Setenv("BEAMAGENTS_TEST_KEY", testKey)
			m, err := apis[0].new(provider.Config{BaseURL: srv.BaseURL(), APIKey: "env:BEAMAGENTS_TEST_KEY"})
			if err != nil {
				b.Fatal(err)
			}
			req := request(b)
			adm := admitter(b)
			b.ResetTimer()
			for range b.N {
				var resp *model.Response
				if streamed {
					st, _ := adm.NewStream()
					resp, err = m.Stream(context.Background(), req, st.Push)
				} else {
					resp, err = m.Generate(context.Background(), req)
				}
				if err != nil || len(resp.Text) == 0 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamWork is the runtime's own work in a streamed call, without HTTP: the answer's
// deltas (8-byte chunks, as BenchmarkCall's server sends them) through the streaming
// canonicalizer and decoder. Compare with BenchmarkCall/sdk/stream.
func BenchmarkStreamWork(b *testing.B) {
	adm := admitter(b)
	var chunks [][]byte
	for t := spacedRefund; len(t) > 0; {
		c := t[:min(8, len(t))]
		t = t[len(c):]
		chunks = append(chunks, []byte(c))
	}
	b.ReportAllocs()
	for range b.N {
		st, _ := adm.NewStream()
		for _, c := range chunks {
			if err := st.Push(c); err != nil {
				b.Fatal(err)
			}
		}
	}
}
