package host_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/model"
)

// exampleAgent builds the examples' agent, with a scripted model for activation 0 of key
// "customer-1", and a keyring to sign its intents.
func exampleAgent() (*agent.Agent, *intent.Keyring) {
	// The proposal schema: what the model may answer (agent/testdata/proto/assist.proto).
	files, err := prototest.Compile(filepath.Join("..", "testdata", "proto"), "assist.proto")
	if err != nil {
		panic(err)
	}
	md, err := prototest.Find(files, "assist.v1.Proposal")
	if err != nil {
		panic(err)
	}
	schema, err := interaction.Compile(md)
	if err != nil {
		panic(err)
	}
	// A replay source standing in for the model: step 0 of activation 0 of key "customer-1"
	// proposes a lookup, step 1 replies.
	doc := func(value string) string {
		return fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":%s}`+"\n",
			interaction.ValueFormat, schema.RootTypeID(), schema.Digest(), value)
	}
	script := fmt.Sprintf("{\"entity\":\"customer-1\",\"seq\":0,\"step\":0,\"response_text\":%q}\n{\"entity\":\"customer-1\",\"seq\":0,\"step\":1,\"response_text\":%q}\n",
		doc(`{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A-1"}}`),
		doc(`{"case":"assist.reply","fields":{"assist.reply.text":"A-1 ships today."}}`))
	m, err := model.ParseScript([]byte(script))
	if err != nil {
		panic(err)
	}
	a, err := bindings.New(bindings.Definition{
		Definition: agent.Definition{Name: "assist", Schema: schema, Model: m, ModelID: "scripted"},
		Bindings: map[string]bindings.Action{
			"assist.reply":  bindings.Final(),
			"assist.lookup": bindings.Tool("lookup_order"),
			"assist.refund": bindings.Approval("refund"),
			"assist.note":   bindings.Remember("assist.note.key", "assist.note.value"),
			"tool":          bindings.Final(),
		},
	})
	if err != nil {
		panic(err)
	}
	kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	return a, kr
}

func Example() {
	a, kr := exampleAgent()
	deps := host.Deps{Keyring: kr}
	state := host.MapStore{}
	key := []byte("customer-1")

	res, _ := host.Activate(context.Background(), a, state, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is A-1?")}}, deps)
	state.Apply(res)
	ti := res.Intents[0]
	fmt.Println(ti.GetKind(), ti.GetToolName(), ti.GetArgsJson(), intent.Verify(ti, kr))

	res, _ = host.Activate(context.Background(), a, state, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 2000,
		Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: ti.GetIntentId(), Status: pb.ToolResult_OK, Payload: []byte(`{"status":"packed"}`)}}}, deps)
	state.Apply(res)
	fmt.Print(res.Finals[0].GetActionJson())
	// Output:
	// TOOL lookup_order {"assist.lookup.order_id":"A-1"} ok
	// {"kind":"final","message":"{\"schema\":\"beam_agents.interaction-value.v1\",\"root_type_id\":\"assist.proposal\",\"schema_digest\":\"sha256:10d6d4812e2b58103c0d2fe65c0edb91c15516406f511016bee27fe9758edd0f\",\"value\":{\"case\":\"assist.reply\",\"fields\":{\"assist.reply.text\":\"A-1 ships today.\"}}}\n"}
}

// A batch runs the inputs of one firing against the key's state, each as its own atomic
// activation; what they changed is committed once.
func ExampleNewBatch() {
	a, kr := exampleAgent()
	state := host.MapStore{}
	key := []byte("customer-1")
	ti := intent.ID(key, 0, 0) // the intent the first input emits
	b := host.NewBatch(a, state, host.Deps{Keyring: kr})
	for _, env := range []*pb.AgentEnvelope{
		{EntityKey: key, EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is A-1?")}},
		{EntityKey: key, EventTimeMs: 2000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: ti, Status: pb.ToolResult_OK, Payload: []byte(`{"status":"packed"}`)}}},
	} {
		res, err := b.Activate(context.Background(), env)
		fmt.Println(len(res.Intents), "intents,", len(res.Finals), "finals,", err)
	}
	// The suspension came and went within the batch: the key ends with its counter and its
	// replay cache, no deadline timer, and the idle TTL of the last input.
	state.Apply(&host.Result{Writes: b.Writes()})
	fmt.Println(slices.Sorted(maps.Keys(state)))
	for _, op := range b.Timers() {
		fmt.Println(op.Tag, op.Set, op.AtMs)
	}
	// Output:
	// 1 intents, 0 finals, <nil>
	// 0 intents, 1 finals, <nil>
	// [llm_cache.v1 seq.v1]
	// deadline false 0
	// ttl true 2592002000
}
