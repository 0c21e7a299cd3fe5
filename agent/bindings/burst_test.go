package bindings_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/model"
)

// TestBurstBindings: a bindings agent reads a burst as its events joined by
// burst.Separator, at its first step and, after a suspension, from its AgentResume.
func TestBurstBindings(t *testing.T) {
	files, err := prototest.Compile(filepath.Join("..", "testdata", "proto"), "assist.proto")
	if err != nil {
		t.Fatal(err)
	}
	md, err := prototest.Find(files, "assist.v1.Proposal")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := interaction.Compile(md)
	if err != nil {
		t.Fatal(err)
	}
	doc := func(value string) string {
		return fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`, interaction.ValueFormat, schema.RootTypeID(), schema.Digest(), value)
	}
	// Each rule answers only a request that carries the whole burst.
	script := fmt.Appendf(nil, "{\"step\":0,\"last\":\"where is A-1?\\nand A-2?\",\"response_text\":%q}\n{\"step\":1,\"contains\":\"where is A-1?\\nand A-2?\",\"response_text\":%q}\n",
		doc(`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A-1"}}`), doc(`{"case":"assist.reply","fields":{"assist.reply.text":"Both shipped."}}`))
	m, err := model.ParseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	a, err := bindings.New(bindings.Definition{
		Definition: agent.Definition{Name: "assist", Schema: schema, Model: m, ModelID: "scripted", Burst: burst.Rule{Window: time.Second}},
		Prompt:     bindings.DefaultPrompt("You answer questions about orders."),
		Bindings: map[string]bindings.Action{"assist.reply": bindings.Final(), "assist.lookup": bindings.Tool("lookup_order"),
			"assist.refund": bindings.Approval("refund"), "assist.note": bindings.Remember("assist.note.key", "assist.note.value"), "tool": bindings.Final()},
	})
	if err != nil {
		t.Fatal(err)
	}
	kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	key := []byte("customer-1")
	ext := func(ms int64, text string) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: ms, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
	}
	store := host.MapStore{}
	res, err := host.NewBatch(a, store, host.Deps{Keyring: kr}).ActivateBurst(context.Background(), []*pb.AgentEnvelope{ext(1000, "where is A-1?"), ext(1500, "and A-2?")})
	if err != nil || len(res.Intents) != 1 {
		t.Fatalf("burst: %v, %d intents, dead letters %v", err, len(res.Intents), res.DeadLetters)
	}
	store.Apply(res)
	ti := res.Intents[0]
	result := &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 3000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		IntentId: ti.GetIntentId(), EntityKey: key, Status: pb.ToolResult_OK, Payload: []byte(`{}`), CompletedAtMs: 3000}}}
	res, err = host.Activate(context.Background(), a, store, result, host.Deps{Keyring: kr})
	if err != nil || len(res.Finals) != 1 || res.Finals[0].GetSeq() != 0 {
		t.Fatalf("resumed: %v, finals %v, dead letters %v", err, res.Finals, res.DeadLetters)
	}
}
