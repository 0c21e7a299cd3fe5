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

func sampleSignal() *pb.AgentEnvelope_Signal {
	return &pb.AgentEnvelope_Signal{Name: "shipment.arrived", SignalId: "ship-77", Payload: []byte(`{"dock":4}`),
		Sender: "warehouse", SentAtMs: 1767225700000, EntityKey: []byte("customer-1")}
}

func TestSignalOutcomes(t *testing.T) {
	kr := testRing(t)
	other, err := intent.NewKeyring("k2", map[string][]byte{"k2": key1})
	if err != nil {
		t.Fatal(err)
	}
	signed := sampleSignal()
	if err := intent.SignSignal(signed, kr); err != nil {
		t.Fatal(err)
	}
	elsewhere := sampleSignal()
	if err := intent.SignSignal(elsewhere, other); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(*pb.AgentEnvelope_Signal)) *pb.AgentEnvelope_Signal {
		s := proto.CloneOf(signed)
		f(s)
		return s
	}
	for _, tc := range []struct {
		name string
		sig  *pb.AgentEnvelope_Signal
		want intent.Outcome
	}{
		{"ok", signed, intent.OK},
		{"unsigned", sampleSignal(), intent.Unsigned},
		{"signed with a key not in the keyring", elsewhere, intent.BadSignature},
		{"for another key", edit(func(s *pb.AgentEnvelope_Signal) { s.EntityKey = []byte("customer-2") }), intent.BadSignature},
		{"tampered payload", edit(func(s *pb.AgentEnvelope_Signal) { s.Payload = []byte(`{"dock":5}`) }), intent.BadSignature},
		{"unknown key", edit(func(s *pb.AgentEnvelope_Signal) { s.SigningKeyId = "k9" }), intent.UnknownKey},
		{"unsupported scheme", edit(func(s *pb.AgentEnvelope_Signal) { s.SignatureScheme = 7 }), intent.UnsupportedScheme},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := intent.VerifySignal(tc.sig, kr); got != tc.want {
				t.Fatalf("VerifySignal = %v, want %v", got, tc.want)
			}
			for _, mode := range []intent.Mode{intent.ModeRequire, intent.ModePermissive, intent.ModeOff} {
				admitted := mode == intent.ModeOff || tc.want == intent.OK || tc.want == intent.Unsigned && mode == intent.ModePermissive
				err := mode.CheckSignal(tc.sig, kr)
				var e *intent.Error
				if admitted != (err == nil) || err != nil && (!errors.As(err, &e) || e.Outcome != tc.want) {
					t.Fatalf("%s: CheckSignal = %v", mode, err)
				}
			}
		})
	}
}

// Every field but the signature envelope, the unknown fields included, is covered.
func TestSignalSignatureCoversEveryField(t *testing.T) {
	kr := testRing(t)
	sig := sampleSignal()
	sig.ProtoReflect().SetUnknown(protowire.AppendString(protowire.AppendTag(nil, 30, protowire.BytesType), "future"))
	if err := intent.SignSignal(sig, kr); err != nil {
		t.Fatal(err)
	}
	b, _ := proto.Marshal(sig)
	back := &pb.AgentEnvelope_Signal{}
	if err := proto.Unmarshal(b, back); err != nil || intent.VerifySignal(back, kr) != intent.OK {
		t.Fatalf("round trip: %v", err)
	}
	fields := sig.ProtoReflect().Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		switch fd.Name() {
		case "signature_scheme", "signing_key_id", "signature":
			continue
		}
		c := proto.CloneOf(sig)
		r := c.ProtoReflect()
		var v protoreflect.Value
		switch fd.Kind() {
		case protoreflect.StringKind:
			v = protoreflect.ValueOfString(r.Get(fd).String() + "x")
		case protoreflect.BytesKind:
			v = protoreflect.ValueOfBytes(append([]byte("x"), r.Get(fd).Bytes()...))
		default:
			v = protoreflect.ValueOfInt64(r.Get(fd).Int() + 1)
		}
		r.Set(fd, v)
		if intent.VerifySignal(c, kr) != intent.BadSignature {
			t.Errorf("changing %s kept the signature valid", fd.Name())
		}
	}
	c := proto.CloneOf(sig)
	c.ProtoReflect().SetUnknown(nil)
	if intent.VerifySignal(c, kr) != intent.BadSignature {
		t.Error("dropping the unknown field kept the signature valid")
	}
}

// VerifySignal never panics and reports ok only for a signal whose signature recomputes.
func FuzzVerifySignal(f *testing.F) {
	kr := testRing(f)
	sig := sampleSignal()
	if err := intent.SignSignal(sig, kr); err != nil {
		f.Fatal(err)
	}
	good, _ := proto.Marshal(sig)
	f.Add(good)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m pb.AgentEnvelope_Signal
		if proto.Unmarshal(data, &m) != nil || intent.VerifySignal(&m, kr) != intent.OK {
			return
		}
		c := proto.CloneOf(&m)
		if err := intent.SignSignalWith(c, kr, m.GetSigningKeyId()); err != nil || !bytes.Equal(c.Signature, m.Signature) {
			t.Fatal("ok for a signal whose signature does not recompute")
		}
	})
}
