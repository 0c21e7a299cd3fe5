package golden_test

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// The golden signals: the signed one verifies, and stops verifying for another key; the
// unsigned one is unsigned. The signal variant round-trips as its own case.
func TestGoldenSignalsVerify(t *testing.T) {
	kr := goldenRing(t)
	signed := goldenMessage(t, "agent_envelope_signal_signed.binpb").(*pb.AgentEnvelope)
	if o := intent.VerifySignal(signed.GetSignal(), kr); o != intent.OK {
		t.Fatalf("signed signal: %v", o)
	}
	other := proto.CloneOf(signed.GetSignal())
	other.EntityKey = []byte("customer-0043")
	if o := intent.VerifySignal(other, kr); o != intent.BadSignature {
		t.Fatalf("signed signal for another key: %v", o)
	}
	unsigned := goldenMessage(t, "agent_envelope_signal.binpb").(*pb.AgentEnvelope)
	if o := intent.VerifySignal(unsigned.GetSignal(), kr); o != intent.Unsigned {
		t.Fatalf("unsigned signal: %v", o)
	}
	got := roundTrip(t, unsigned)
	mustEqual(t, got, unsigned)
	if got.GetSignal() == nil || got.GetSignal().GetName() != "shipment.arrived" {
		t.Fatal("the signal case did not round-trip")
	}
}

// A reader predating the signal case (and the approval's args_json) keeps them as unknown
// fields, not a parse failure; re-encoding keeps their bytes.
func TestEnvelopeBeforeSignalStillDecodes(t *testing.T) {
	for _, tc := range []struct {
		file, message string
		keep          func(f *descriptorpb.FieldDescriptorProto) bool
	}{
		{"agent_envelope_signal_signed.binpb", "AgentEnvelope", func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetNumber() >= 7 }},
		{"agent_envelope_approval_args.binpb", "AgentEnvelope.Approval", func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetNumber() >= 10 }},
	} {
		older := olderBindings(t, "AgentEnvelope", func(fdp *descriptorpb.FileDescriptorProto) {
			m := messageProto(fdp, "AgentEnvelope")
			if tc.message == "AgentEnvelope.Approval" {
				for _, n := range m.NestedType {
					if n.GetName() == "Approval" {
						m = n
					}
				}
			}
			m.Field = slices.DeleteFunc(m.Field, tc.keep)
		}).New()
		blob := goldenBlob(t, tc.file)
		if err := proto.Unmarshal(blob, older.Interface()); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		unknown := older.GetUnknown()
		if ap := older.Descriptor().Fields().ByName("approval"); tc.message == "AgentEnvelope.Approval" {
			unknown = older.Get(ap).Message().GetUnknown()
		}
		if len(unknown) == 0 {
			t.Fatalf("%s: older bindings did not keep the new field as unknown", tc.file)
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(older.Interface())
		if err != nil {
			t.Fatal(err)
		}
		back := &pb.AgentEnvelope{}
		if err := proto.Unmarshal(again, back); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, back, goldenMessage(t, tc.file))
	}
}

// A journal with waits and the continuation waiting on it decode with every field.
func TestGoldenWaitsDecode(t *testing.T) {
	j := goldenMessage(t, "handler_journal_waits.binpb").(*pb.HandlerJournal)
	e := j.GetEntries()
	if len(e) != 3 || e[0].GetOp() != pb.JournalEntry_TIMER || !e[0].GetFound() || e[0].GetAtMs() == 0 ||
		e[1].GetOp() != pb.JournalEntry_AWAIT || e[1].GetSignal().GetSignalId() != "ship-0077" || e[2].GetFound() {
		t.Fatalf("journal with waits: %v", j)
	}
	c := goldenMessage(t, "continuation_waiting.binpb").(*pb.Continuation)
	if c.GetWakeAtMs() != c.GetDeadlineMs() || c.GetAwaitingSignal() != "shipment.signed" || len(c.GetPendingIntentIds()) != 0 {
		t.Fatalf("waiting continuation: %v", c)
	}
	snap := &pb.HandlerJournal{}
	if err := proto.Unmarshal(c.GetSnapshot(), snap); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, snap, j)
}
