package drive_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// A customer's messages within two seconds of the first run as one activation, whatever
// order they arrive in; a message after the window begins the next burst.
func Example_burst() {
	a, err := agent.New(agent.Definition{
		Name:  "support-bursts",
		Burst: burst.Rule{Window: 2 * time.Second, MaxEvents: 8},
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			var texts []string
			for _, e := range tr.Events() {
				texts = append(texts, string(e.Event))
			}
			return hc.Reply(fmt.Sprintf("%d message(s): %s", len(texts), strings.Join(texts, " / ")))
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	const t0 = int64(1767225600000)
	msg := func(ms int64, text string) []byte {
		b, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte("customer-1"), EventTimeMs: t0 + ms,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
		return b
	}
	d := &drive.Driver{Core: drive.Core{Agent: a, OrderResolutionMs: 1000}}
	in := [][]byte{msg(1900, "it was due Monday"), msg(0, "hi"), msg(800, "my order A-1001 is late"), msg(5000, "thanks")}
	d.Run(context.Background(), []byte("customer-1"), in, func(kind int64, b []byte) {
		if kind == records.OutFinal {
			f := &pb.FinalReply{}
			proto.Unmarshal(b, f)
			fmt.Printf("seq %d: %s\n", f.GetSeq(), f.GetMessage())
		}
	})
	// Output:
	// seq 0: 3 message(s): hi / my order A-1001 is late / it was due Monday
	// seq 1: 1 message(s): thanks
}
