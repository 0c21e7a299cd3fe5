package rehearse

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// The wire peeks never panic and agree with decoding: a trace's type, when traceType can
// tell it, is the decoded event's, and a snapshot field says no pending intents only of a
// snapshot that decodes without any.
func FuzzPeek(f *testing.F) {
	llm := drive.Marshal(&pb.TraceEvent{EntityKey: []byte("k"), EventType: pb.TraceEvent_LLM_CALL, Attributes: map[string]string{"a": "b"}})
	snap := drive.Marshal(&pb.StateSnapshot{EntityKey: []byte("k"), Seq: 2, Pending: []*pb.ToolIntent{{IntentId: "i", Signature: []byte{1}}}})
	for _, seed := range [][]byte{
		llm,
		snap,
		drive.Marshal(&pb.StateSnapshot{EntityKey: []byte("k"), Seq: 2}),
		append(llm, protowire.AppendTag(nil, eventTypeField, protowire.BytesType)...),
		append(protowire.AppendVarint(protowire.AppendTag(nil, eventTypeField, protowire.VarintType), 3), llm...),
		{0xff},
		nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if typ, ok := traceType(b); ok {
			if te := (&pb.TraceEvent{}); proto.Unmarshal(b, te) == nil && te.GetEventType() != typ {
				t.Fatalf("traceType %v, decoded %v", typ, te.GetEventType())
			}
		}
		if _, _, pending, ok := field(b, pendingField); ok && !pending {
			if s := (&pb.StateSnapshot{}); proto.Unmarshal(b, s) == nil && len(s.GetPending()) > 0 {
				t.Fatalf("no pending field, decoded %d pending intents", len(s.GetPending()))
			}
		}
	})
}
