package rehearse_test

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
)

func shadowItem(t *testing.T, shadow bool, m proto.Message, at int64) *pb.ShadowItem {
	t.Helper()
	kind := map[string]int64{"ToolIntent": records.OutIntent, "FinalReply": records.OutFinal, "ActivationErrorRecord": records.OutDeadLetter}[string(m.ProtoReflect().Descriptor().Name())]
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	it, ok := rehearse.NewShadowItem(shadow, kind, b, at)
	if !ok {
		t.Fatalf("no item of %v", m)
	}
	return it
}

func call(seq int64, step uint32, tool, args string, shadow bool) *pb.ToolIntent {
	ti := &pb.ToolIntent{IntentId: intent.ID([]byte("k"), seq, step), EntityKey: []byte("k"), Seq: seq, StepIndex: step, ToolName: tool, ArgsJson: args}
	if shadow {
		intent.MarkShadow(ti)
	} else {
		ti.SigningKeyId, ti.Signature, ti.SignatureScheme = "k1", []byte("sig"), pb.ToolIntent_HMAC_SHA256
	}
	return ti
}

func final(seq int64, step uint32, text string) *pb.FinalReply {
	return &pb.FinalReply{EntityKey: []byte("k"), Seq: seq, StepIndex: step, Message: text}
}

func deadLetter(reason records.Reason, at int64) *pb.ActivationErrorRecord {
	return &pb.ActivationErrorRecord{EntityKey: []byte("k"), Reason: string(reason), EventTimeMs: at}
}

// Settle compares each firing of both sides once settled: signatures do not count, the first
// difference is the firing's divergence and passes the activation's later firings over, and
// a shadow's dead letters that follow from a divergence are not divergences of their own.
func TestSettle(t *testing.T) {
	type cmpd struct {
		seq  int64
		kind rehearse.Kind
		miss bool
	}
	for _, tc := range []struct {
		name  string
		items func(t *testing.T) []*pb.ShadowItem
		want  []cmpd
	}{
		{"agree", func(t *testing.T) []*pb.ShadowItem {
			return []*pb.ShadowItem{shadowItem(t, false, call(0, 0, "lookup", `{"a":1}`, false), 10), shadowItem(t, true, call(0, 0, "lookup", `{"a":1}`, true), 10),
				shadowItem(t, false, final(1, 0, "hi"), 20), shadowItem(t, true, final(1, 0, "hi"), 20)}
		}, []cmpd{{0, "", false}, {1, "", false}}},
		{"another tool, then the activation passed over", func(t *testing.T) []*pb.ShadowItem {
			return []*pb.ShadowItem{shadowItem(t, false, call(0, 0, "lookup", `{"a":1}`, false), 10), shadowItem(t, true, call(0, 0, "lookup_v2", `{"a":1}`, true), 10),
				shadowItem(t, false, final(0, 1, "done"), 30), shadowItem(t, true, deadLetter(records.ReasonResultRefused, 30), 30),
				shadowItem(t, true, deadLetter(records.ReasonActivationTimeout, 300), 300)}
		}, []cmpd{{0, rehearse.KindTool, false}}},
		{"final text, missing final", func(t *testing.T) []*pb.ShadowItem {
			return []*pb.ShadowItem{shadowItem(t, false, final(0, 0, "a"), 10), shadowItem(t, true, final(0, 0, "b"), 10),
				shadowItem(t, false, final(1, 0, "a"), 20)}
		}, []cmpd{{0, rehearse.KindFinal, false}, {1, rehearse.KindFinal, true}}},
		{"dead-letter reason", func(t *testing.T) []*pb.ShadowItem {
			return []*pb.ShadowItem{shadowItem(t, false, deadLetter(records.ReasonProposalRefused, 10), 10), shadowItem(t, true, deadLetter(records.ReasonModelError, 10), 10),
				shadowItem(t, true, deadLetter(records.ReasonBudgetExceeded, 20), 20)}
		}, []cmpd{{0, rehearse.KindDeadLetter, false}, {0, rehearse.KindDeadLetter, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for shuffle := range 4 {
				items := tc.items(t)
				rand.New(rand.NewPCG(uint64(shuffle), 1)).Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
				st := &pb.ShadowCompareState{Items: items}
				if w := rehearse.Wake(st, 5); w != 15 {
					t.Fatalf("wake %d, want 15", w)
				}
				var got []cmpd
				for _, c := range rehearse.Settle(st, 1000, 5) {
					got = append(got, cmpd{c.GetSeq(), rehearse.Kind(c.GetKind()), c.GetMissing()})
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("got %v, want %v", got, tc.want)
					}
				}
				if len(st.GetItems()) != 0 || rehearse.Wake(st, 5) != 0 {
					t.Fatalf("left %v", st.GetItems())
				}
			}
		})
	}
	// Only settled items are compared.
	st := &pb.ShadowCompareState{Items: []*pb.ShadowItem{shadowItem(t, false, final(0, 0, "a"), 10), shadowItem(t, false, final(1, 0, "a"), 100)}}
	if cs := rehearse.Settle(st, 50, 5); len(cs) != 1 || len(st.GetItems()) != 1 || rehearse.Wake(st, 5) != 105 {
		t.Fatalf("%v, left %v", cs, st.GetItems())
	}
}

// FuzzShadowItem: any bytes of any kind make an item or are refused, never a panic.
func FuzzShadowItem(f *testing.F) {
	b, _ := proto.Marshal(call(1, 2, "t", "{}", true))
	f.Add(records.OutIntent, b)
	f.Add(records.OutFinal, []byte{0x10, 0x01})
	f.Add(records.OutDeadLetter, []byte{0xff})
	f.Fuzz(func(t *testing.T, kind int64, b []byte) {
		if it, ok := rehearse.NewShadowItem(true, kind, b, 1); ok {
			st := &pb.ShadowCompareState{Items: []*pb.ShadowItem{it}}
			rehearse.Settle(st, 2, 0)
		}
	})
}
