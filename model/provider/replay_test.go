package provider_test

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/statecodec"
)

// TestReplayMakesOneRequest: the same activation run twice, the second time over the state
// the first one wrote (as a retried bundle would after a restore), makes exactly one HTTP
// request and emits the same outputs.
func TestReplayMakesOneRequest(t *testing.T) {
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			reply := `{"case":"support.reply","fields":{"support.reply.text":"Hello! How can I help?"}}`
			srv, m := start(t, api.name, provider.Config{}, always(llmtest.Reply{Text: reply, InputTokens: 10, OutputTokens: 5}))
			base, err := support.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			a, err := base.WithModel(m, "test-model", true)
			if err != nil {
				t.Fatal(err)
			}
			env := &pb.AgentEnvelope{EntityKey: []byte("customer-1"), EventTimeMs: 1767225600000,
				Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("Hi, can you help me?")}}
			first, err := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{})
			if err != nil || len(first.Finals) != 1 {
				t.Fatalf("first: %v, %d finals", err, len(first.Finals))
			}
			replay := host.MapStore{statecodec.CellLLMCache: first.Writes[statecodec.CellLLMCache]}
			second, err := host.Activate(context.Background(), a, replay, env, host.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()); n != 1 || second.ModelCalls != 0 {
				t.Fatalf("%d requests, %d model calls on replay", n, second.ModelCalls)
			}
			b1, _ := proto.MarshalOptions{Deterministic: true}.Marshal(first.Finals[0])
			b2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(second.Finals[0])
			if !bytes.Equal(b1, b2) {
				t.Fatal("the replayed final differs")
			}
		})
	}
}
