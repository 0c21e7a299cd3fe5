package bindings_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
	"github.com/beamagents/beamagents/model"
)

// An agent of bindings: the model proposes one case of the schema, and the case's binding
// acts. Here a lookup proposal becomes a signed TOOL intent and suspends the activation.
func ExampleNew() {
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
	// A recorded answer standing in for the model: step 0 of activation 0 of "customer-1".
	doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A-1"}}}`,
		interaction.ValueFormat, schema.RootTypeID(), schema.Digest())
	m, err := model.ParseScript(fmt.Appendf(nil, "{\"entity\":\"customer-1\",\"seq\":0,\"step\":0,\"response_text\":%q}\n", doc))
	if err != nil {
		panic(err)
	}
	a, err := bindings.New(bindings.Definition{
		Definition: agent.Definition{Name: "assist", Schema: schema, Model: m, ModelID: "scripted"},
		Prompt:     bindings.DefaultPrompt("You answer questions about orders."),
		Bindings: map[string]bindings.Action{
			"assist.reply":  bindings.Final(),
			"assist.lookup": bindings.Tool("lookup_order"),
			"assist.refund": bindings.Approval("refund"),
			"assist.note":   bindings.Remember("assist.note.key", "assist.note.value"),
			"tool":          bindings.Final(), // a case named "tool" is just a case
		},
	})
	if err != nil {
		panic(err)
	}
	kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{1}, 32)})
	res, err := host.Activate(context.Background(), a, host.MapStore{}, &pb.AgentEnvelope{EntityKey: []byte("customer-1"), EventTimeMs: 1000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is A-1?")}}, host.Deps{Keyring: kr})
	if err != nil {
		panic(err)
	}
	ti := res.Intents[0]
	fmt.Println(ti.GetKind(), ti.GetToolName(), ti.GetArgsJson())
	// Output:
	// TOOL lookup_order {"assist.lookup.order_id":"A-1"}
}
