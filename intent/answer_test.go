package intent_test

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

func sampleResult() *pb.ToolResult {
	ti := sampleIntent()
	return &pb.ToolResult{IntentId: ti.IntentId, EntityKey: ti.EntityKey, Seq: ti.Seq, Status: pb.ToolResult_OK,
		Payload: []byte(`{"refund_id":"R-1"}`), CompletedAtMs: 1767225700000}
}

func sampleApproval() *pb.AgentEnvelope_Approval {
	return &pb.AgentEnvelope_Approval{IntentId: sampleIntent().IntentId, Approved: true, Approver: "ops@example.com", DecidedAtMs: 1767225700000}
}

// The content digest ignores the signature and the delivery fields an escalation changes, and
// nothing else.
func TestDigest(t *testing.T) {
	kr := testRing(t)
	base, err := intent.Digest(sampleIntent())
	if err != nil || len(base) != 32 {
		t.Fatalf("Digest = %x, %v", base, err)
	}
	same := map[string]func(*pb.ToolIntent){
		"signed":    func(ti *pb.ToolIntent) { _ = intent.Sign(ti, kr) },
		"escalated": func(ti *pb.ToolIntent) { ti.Attempt, ti.ExpiresAtMs = 2, ti.ExpiresAtMs+600000 },
	}
	for name, mutate := range same {
		ti := sampleIntent()
		mutate(ti)
		if d, _ := intent.Digest(ti); !bytes.Equal(d, base) {
			t.Errorf("%s: digest changed", name)
		}
	}
	fields := sampleIntent().ProtoReflect().Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		switch fd.Name() {
		case "signature_scheme", "signing_key_id", "signature", "attempt", "expires_at_ms":
			continue
		}
		ti := sampleIntent()
		m := ti.ProtoReflect()
		m.Set(fd, tampered(fd, m.Get(fd)))
		if d, _ := intent.Digest(ti); bytes.Equal(d, base) {
			t.Errorf("changing %s kept the digest", fd.Name())
		}
	}
	ti := sampleIntent()
	ti.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 20, protowire.BytesType), "future"))
	if d, _ := intent.Digest(ti); bytes.Equal(d, base) {
		t.Error("an unknown field is not covered by the digest")
	}
}

// answer abstracts over a result and a decision so one table tests both.
type answer struct {
	name   string
	fresh  func() proto.Message
	sign   func(m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) error
	verify func(m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) intent.Outcome
	check  func(mode intent.Mode, m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) error
}

var answers = []answer{
	{
		name:  "result",
		fresh: func() proto.Message { return sampleResult() },
		sign: func(m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) error {
			return intent.SignResult(m.(*pb.ToolResult), ti, kr)
		},
		verify: func(m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) intent.Outcome {
			return intent.VerifyResult(m.(*pb.ToolResult), ti, kr)
		},
		check: func(mode intent.Mode, m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) error {
			return mode.CheckResult(m.(*pb.ToolResult), ti, kr)
		},
	},
	{
		name:  "approval",
		fresh: func() proto.Message { return sampleApproval() },
		sign: func(m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) error {
			return intent.SignApproval(m.(*pb.AgentEnvelope_Approval), ti, kr)
		},
		verify: func(m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) intent.Outcome {
			return intent.VerifyApproval(m.(*pb.AgentEnvelope_Approval), ti, kr)
		},
		check: func(mode intent.Mode, m proto.Message, ti *pb.ToolIntent, kr *intent.Keyring) error {
			return mode.CheckApproval(m.(*pb.AgentEnvelope_Approval), ti, kr)
		},
	},
}

func setField(m proto.Message, name string, v protoreflect.Value) {
	r := m.ProtoReflect()
	r.Set(r.Descriptor().Fields().ByName(protoreflect.Name(name)), v)
}

func TestAnswerOutcomes(t *testing.T) {
	kr := testRing(t)
	other, err := intent.NewKeyring("k2", map[string][]byte{"k2": key1})
	if err != nil {
		t.Fatal(err)
	}
	ti := sampleIntent()
	if err := intent.Sign(ti, kr); err != nil {
		t.Fatal(err)
	}
	escalated := proto.CloneOf(ti)
	escalated.Attempt, escalated.ExpiresAtMs = 1, ti.ExpiresAtMs+300000
	sameID := sampleIntent() // another call derived to the same id
	sameID.ArgsJson = `{"amount":"500"}`
	for _, a := range answers {
		signed := a.fresh()
		if err := a.sign(signed, ti, kr); err != nil {
			t.Fatal(err)
		}
		forgedElsewhere := a.fresh()
		if err := a.sign(forgedElsewhere, ti, other); err != nil {
			t.Fatal(err)
		}
		boundToOther := a.fresh()
		if err := a.sign(boundToOther, sameID, kr); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name    string
			m       proto.Message
			pending *pb.ToolIntent
			want    intent.Outcome
		}{
			{"ok", signed, ti, intent.OK},
			{"ok after the intent escalated", signed, escalated, intent.OK},
			{"unsigned", a.fresh(), ti, intent.Unsigned},
			{"signed with a key not in the keyring", forgedElsewhere, ti, intent.BadSignature},
			{"bound to another intent with the same id", boundToOther, ti, intent.BindingMismatch},
			{"bound to nothing", func() proto.Message {
				m := a.fresh()
				_ = a.sign(m, ti, kr)
				setField(m, "intent_digest", protoreflect.ValueOfBytes(nil))
				return m
			}(), ti, intent.BadSignature},
			{"tampered", func() proto.Message {
				m := proto.Clone(signed)
				setField(m, "intent_id", protoreflect.ValueOfString("x"))
				return m
			}(), ti, intent.BadSignature},
			{"unknown key", func() proto.Message {
				m := proto.Clone(signed)
				setField(m, "signing_key_id", protoreflect.ValueOfString("k9"))
				return m
			}(), ti, intent.UnknownKey},
			{"unsupported scheme", func() proto.Message {
				m := proto.Clone(signed)
				setField(m, "signature_scheme", protoreflect.ValueOfEnum(7))
				return m
			}(), ti, intent.UnsupportedScheme},
		} {
			t.Run(a.name+"/"+tc.name, func(t *testing.T) {
				if got := a.verify(tc.m, tc.pending, kr); got != tc.want {
					t.Fatalf("verify = %v, want %v", got, tc.want)
				}
			})
		}
		// Every field but the envelope, the unknown fields included, is covered.
		t.Run(a.name+"/covers every field", func(t *testing.T) {
			m := a.fresh()
			m.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 30, protowire.BytesType), "future"))
			if err := a.sign(m, ti, kr); err != nil {
				t.Fatal(err)
			}
			b, _ := proto.Marshal(m)
			back := a.fresh()
			proto.Reset(back)
			if err := proto.Unmarshal(b, back); err != nil || a.verify(back, ti, kr) != intent.OK {
				t.Fatalf("round trip: %v", err)
			}
			fields := m.ProtoReflect().Descriptor().Fields()
			for i := 0; i < fields.Len(); i++ {
				fd := fields.Get(i)
				switch fd.Name() {
				case "signature_scheme", "signing_key_id", "signature":
					continue
				}
				c := proto.Clone(m)
				r := c.ProtoReflect()
				var v protoreflect.Value
				if fd.Kind() == protoreflect.BoolKind {
					v = protoreflect.ValueOfBool(!r.Get(fd).Bool())
				} else {
					v = tampered(fd, r.Get(fd))
				}
				r.Set(fd, v)
				if o := a.verify(c, ti, kr); o != intent.BadSignature {
					t.Errorf("tampered %s: %v", fd.Name(), o)
				}
			}
			c := proto.Clone(m)
			c.ProtoReflect().SetUnknown(nil)
			if o := a.verify(c, ti, kr); o != intent.BadSignature {
				t.Errorf("dropped unknown field: %v", o)
			}
		})
		t.Run(a.name+"/modes", func(t *testing.T) {
			for _, tc := range []struct {
				mode  intent.Mode
				m     proto.Message
				admit bool
			}{
				{intent.ModeRequire, signed, true}, {intent.ModeRequire, a.fresh(), false}, {intent.ModeRequire, boundToOther, false},
				{intent.ModePermissive, signed, true}, {intent.ModePermissive, a.fresh(), true}, {intent.ModePermissive, forgedElsewhere, false},
				{intent.ModePermissive, boundToOther, false},
				{intent.ModeOff, forgedElsewhere, true}, {intent.ModeOff, boundToOther, true},
			} {
				err := a.check(tc.mode, tc.m, ti, kr)
				if (err == nil) != tc.admit {
					t.Errorf("%s: %v, want admit=%v", tc.mode, err, tc.admit)
				}
				if err != nil && !errors.Is(err, intent.ErrVerify) {
					t.Errorf("%v is not ErrVerify", err)
				}
			}
			err := a.check(intent.ModeRequire, boundToOther, ti, kr)
			if !errors.Is(err, &intent.Error{Code: intent.CodeVerify, Outcome: intent.BindingMismatch}) {
				t.Errorf("binding mismatch: %v", err)
			}
		})
	}
	if err := intent.SignResultWith(sampleResult(), ti, kr, "nope"); !errors.Is(err, intent.ErrSign) {
		t.Fatalf("SignResultWith unknown key: %v", err)
	}
	if intent.BindingMismatch.Reason() != "intent_binding_mismatch" {
		t.Fatal(intent.BindingMismatch.Reason())
	}
}
