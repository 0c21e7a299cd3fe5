package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/prototest"
	"github.com/beamagents/beamagents/model"
)

func Example() {
	// The proposal schema: what the model may answer (testdata/proto/assist.proto).
	files, err := prototest.Compile(filepath.Join("testdata", "proto"), "assist.proto")
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
	a, err := agent.New(agent.Definition{
		Name: "assist", Schema: schema, Model: m, ModelID: "scripted",
		Bindings: map[string]agent.Action{
			"assist.reply":  agent.Final(),
			"assist.lookup": agent.Tool("lookup_order"),
			"assist.refund": agent.Approval("refund"),
			"assist.note":   agent.Remember("assist.note.key", "assist.note.value"),
			"tool":          agent.Final(),
		},
	})
	if err != nil {
		panic(err)
	}
	kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	deps := agent.Deps{Keyring: kr}
	state := agent.MapStore{}
	key := []byte("customer-1")

	res, _ := a.Activate(context.Background(), state, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is A-1?")}}, deps)
	state.Apply(res)
	ti := res.Intents[0]
	fmt.Println(ti.GetKind(), ti.GetToolName(), ti.GetArgsJson(), intent.Verify(ti, kr))

	res, _ = a.Activate(context.Background(), state, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 2000,
		Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: ti.GetIntentId(), Status: pb.ToolResult_OK, Payload: []byte(`{"status":"packed"}`)}}}, deps)
	state.Apply(res)
	fmt.Print(res.Finals[0].GetActionJson())
	// Output:
	// TOOL lookup_order {"assist.lookup.order_id":"A-1"} ok
	// {"kind":"final","message":"{\"schema\":\"beam_agents.interaction-value.v1\",\"root_type_id\":\"assist.proposal\",\"schema_digest\":\"sha256:10d6d4812e2b58103c0d2fe65c0edb91c15516406f511016bee27fe9758edd0f\",\"value\":{\"case\":\"assist.reply\",\"fields\":{\"assist.reply.text\":\"A-1 ships today.\"}}}\n"}
}
