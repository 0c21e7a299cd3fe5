package provider_test

import (
	"context"
	"testing"

	"github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// Every way of calling either API reads the prompt-cache reads its answer reports, in the one
// meaning of model.Usage: the input tokens are the whole prompt (Anthropic's input_tokens
// plus its cache_read_input_tokens), the cached ones the reads; an answer without reads has 0.
func TestPromptCacheUsage(t *testing.T) {
	tools := func(t *testing.T) *model.Request {
		return &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "device 7 is hot"}}, Tools: deviceTools(t)}
	}
	calls := []struct {
		name  string
		reply llmtest.Reply
		call  func(*testing.T, hosted) (*model.Response, error)
	}{
		{"proposal", llmtest.Reply{Text: lookup}, func(t *testing.T, m hosted) (*model.Response, error) { return call(t, m, false) }},
		{"proposal streamed", llmtest.Reply{Text: lookup}, func(t *testing.T, m hosted) (*model.Response, error) { return call(t, m, true) }},
		{"native tools", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: provider.WireName(devices.ToolLookup), Arguments: `{"device_id":7}`}}},
			func(t *testing.T, m hosted) (*model.Response, error) {
				return m.Generate(context.Background(), tools(t))
			}},
		{"native tools streamed", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: provider.WireName(devices.ToolLookup), Arguments: `{"device_id":7}`}}},
			func(t *testing.T, m hosted) (*model.Response, error) {
				return m.(model.ToolStreamer).StreamTools(context.Background(), tools(t), func(model.ToolDelta) error { return nil })
			}},
		{"free text", llmtest.Reply{Text: "Hello."}, func(t *testing.T, m hosted) (*model.Response, error) {
			return m.Generate(context.Background(), &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Content: "Hi"}}})
		}},
	}
	counts := []struct {
		name         string
		in, cached   int64
		wantIn, want int64
	}{
		{"no cache reads", 182, 0, 182, 0},
		{"cache reads", 2200, 2048, 2200, 2048},
		{"all read from the cache", 1024, 1024, 1024, 1024},
	}
	for _, api := range apis {
		for _, c := range calls {
			for _, n := range counts {
				t.Run(api.name+"/"+c.name+"/"+n.name, func(t *testing.T) {
					rep := c.reply
					rep.InputTokens, rep.CachedInputTokens, rep.OutputTokens = n.in, n.cached, 31
					_, m := start(t, api.name, provider.Config{}, always(rep))
					resp, err := c.call(t, m)
					if err != nil {
						t.Fatal(err)
					}
					if want := (model.Usage{InputTokens: n.wantIn, CachedInputTokens: n.want, OutputTokens: 31}); resp.Usage != want {
						t.Fatalf("usage %+v, want %+v", resp.Usage, want)
					}
				})
			}
		}
	}
}
