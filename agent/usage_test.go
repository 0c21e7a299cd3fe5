package agent_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/tracing"
)

// A model call's LLM_CALL event carries the provider's prompt-cache reads as
// gen_ai.usage.cache_read.input_tokens only when there are some: the events of calls without
// them are the bytes they were. The same answer traces the same bytes every time.
func TestLLMCallCountsPromptCacheReads(t *testing.T) {
	text := replyHi(t)
	for _, tc := range []struct {
		name         string
		usage        model.Usage
		want, wantIn string
		wantPresent  bool
	}{
		{"no cache reads", model.Usage{InputTokens: 182, OutputTokens: 31}, "", "182", false},
		{"cache reads", model.Usage{InputTokens: 2200, CachedInputTokens: 2048, OutputTokens: 31}, "2048", "2200", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fixedModel{resp: &model.Response{Text: []byte(text), Usage: tc.usage}}
			a, err := bindings.New(bindings.Definition{Bindings: testBindings(), Definition: agent.Definition{Name: "assist", Schema: testSchema(t), Model: m, ModelID: "scripted-1"}})
			if err != nil {
				t.Fatal(err)
			}
			call := func() *pb.TraceEvent {
				env := &pb.AgentEnvelope{EntityKey: []byte("acme-1"), EventTimeMs: 1_000_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
				res, err := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{AllowUnsigned: true})
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range res.Outputs.Traces {
					if ev.GetEventType() == pb.TraceEvent_LLM_CALL {
						return ev
					}
				}
				t.Fatal("no LLM_CALL event")
				return nil
			}
			ev := call()
			at := ev.GetAttributes()
			got, present := at[tracing.AttrCacheReadInputTokens]
			if got != tc.want || present != tc.wantPresent || at[tracing.AttrInputTokens] != tc.wantIn {
				t.Fatalf("attributes %v", at)
			}
			if again := call(); !proto.Equal(ev, again) {
				t.Fatalf("the same answer traced %v, then %v", ev, again)
			}
		})
	}
}
