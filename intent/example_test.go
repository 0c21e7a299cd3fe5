package intent_test

import (
	"fmt"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

func Example() {
	// On a worker, keys come by reference: intent.LoadKeyring("env:BEAMAGENTS_KEYRING").
	kr, err := intent.ParseKeyring([]byte(`{"active":"2026-11","keys":[{"id":"2026-11","secret":"c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA=="}]}`))
	if err != nil {
		panic(err)
	}
	ti := &pb.ToolIntent{
		IntentId:  intent.ID([]byte("customer-0042"), 7, 2),
		EntityKey: []byte("customer-0042"),
		Seq:       7,
		StepIndex: 2,
		ToolName:  "refund",
		ArgsJson:  `{"amount":"12"}`,
		Kind:      pb.ToolIntent_TOOL,
	}
	if err := intent.Sign(ti, kr); err != nil {
		panic(err)
	}
	fmt.Println(ti.GetIntentId())
	fmt.Println(intent.Verify(ti, kr))
	ti.ArgsJson = `{"amount":"1200"}`
	fmt.Println(intent.Verify(ti, kr))
	fmt.Println(kr)
	// Output:
	// 0ed2c6f7-be13-55e3-8120-e2382bdf0187
	// ok
	// bad_signature
	// intent.Keyring{active: 2026-11, keys: [2026-11]}
}
