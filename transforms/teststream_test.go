package transforms_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/teststream"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// An unbounded run driven by the watermark: the approval deadline escalates once when the
// watermark passes it, the approval then arrives in time for the escalated deadline, the gated
// tool runs and its result resumes the activation to a reply.
func TestWatermarkDrivenEscalationThenApproval(t *testing.T) {
	const minute = int64(60 * 1000)
	ref, _ := keyringRef(t)
	config := agentConfig(t, []answer{{"c", 0, 0, refund("A-9", 500)}, {"c", 0, 2, reply("Refunded after all.")}})
	at := func(env *pb.AgentEnvelope) []byte { b, _ := proto.Marshal(env); return b }

	ts := teststream.NewConfig()
	ts.AddElements(t0, at(ext("c", t0, "refund A-9")))
	ts.AdvanceWatermark(t0 + 11*minute) // past the 10-minute approval deadline: escalation 1
	ts.AddElements(t0+12*minute, at(approval("c", t0+12*minute, 0, 0, true)))
	ts.AdvanceWatermark(t0 + 13*minute) // the approval is due: the gated tool intent
	ts.AddElements(t0+14*minute, at(result("c", t0+14*minute, 0, 1, `{"refund_id":"R-9"}`)))
	ts.AdvanceWatermark(t0 + 15*minute) // the result is due: the reply
	ts.AdvanceWatermarkToInfinity()

	dir := t.TempDir()
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, teststream.Create(s, ts))
	out := transforms.RunAgent(s, transforms.Options{Agent: support.Name, Config: config, Keyring: ref}, keyed)
	pipeline.WriteRecords(s, dir, "intents", "beam_agents.v1.ToolIntent", out.Intents)
	pipeline.WriteRecords(s, dir, "finals", "beam_agents.v1.FinalReply", out.Finals)
	pipeline.WriteRecords(s, dir, "dead", "beam_agents.v1.ActivationErrorRecord", beam.Flatten(s, dead, out.DeadLetters))
	if err := ptest.Run(p); err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name+".binpb"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	intents := decodeAll(t, read("intents"), func() *pb.ToolIntent { return &pb.ToolIntent{} })
	finals := decodeAll(t, read("finals"), func() *pb.FinalReply { return &pb.FinalReply{} })
	deadLetters := decodeAll(t, read("dead"), func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
	if len(deadLetters) != 0 {
		t.Fatalf("dead letters %v", deadLetters)
	}
	seen := map[string]int{}
	for _, ti := range intents {
		seen[ti.GetKind().String()+"/"+string(rune('0'+ti.GetAttempt()))]++
	}
	if len(intents) != 3 || seen["APPROVAL/0"] != 1 || seen["APPROVAL/1"] != 1 || seen["TOOL/0"] != 1 {
		t.Fatalf("intents %v", seen)
	}
	if len(finals) != 1 || finalText(t, finals[0]) != "Refunded after all." {
		t.Fatalf("finals %v", finals)
	}
}
