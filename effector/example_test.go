package effector_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

type greetArgs struct {
	Name string `json:"name"`
}

func Example() {
	dir, _ := os.MkdirTemp("", "effector-example-")
	defer os.RemoveAll(dir)
	st, _ := store.OpenBolt(filepath.Join(dir, "dedup.db"))
	defer st.Close()
	kr, _ := intent.NewKeyring("k", map[string][]byte{"k": []byte("0123456789abcdef0123456789abcdef")})

	args, _ := tool.FromJSONSchema("greet.args", []byte(`{"type":"object","properties":{"name":{"type":"string","maxLength":64}}}`))
	greet, _ := tool.Func("greet", args, func(_ context.Context, _ tool.Call, a greetArgs) (string, error) {
		return "hello " + a.Name, nil
	})
	e, _ := effector.New(effector.Options{Keyring: kr, Store: st, Tools: []effector.Binding{{Tool: greet}}})

	ti := &pb.ToolIntent{
		IntentId: intent.ID([]byte("user-1"), 0, 0), EntityKey: []byte("user-1"), ToolName: "greet",
		ArgsJson: `{"greet.args.name":"Ada"}`, Kind: pb.ToolIntent_TOOL,
	}
	intent.Sign(ti, kr)
	for range 2 { // the second delivery is answered from the store
		out, _ := e.Handle(context.Background(), ti)
		r := out.Envelope.GetToolResult()
		fmt.Println(r.GetStatus(), string(r.GetPayload()))
	}
	m := e.Metrics().Snapshot()
	fmt.Println("executed", m["executed"], "deduplicated", m["deduplicated"])
	// Output:
	// OK "hello Ada"
	// OK "hello Ada"
	// executed 1 deduplicated 1
}
