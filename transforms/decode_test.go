package transforms

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func TestDecodeEnvelope(t *testing.T) {
	valid := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 5, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	bin, _ := proto.Marshal(valid)
	for _, tc := range []struct {
		name   string
		format Format
		rec    string
		ok     bool
	}{
		{"binary", Binary, string(bin), true},
		{"json", JSON, `{"entityKey":"aw==","eventTimeMs":"5","externalEvent":"aGk="}`, true},
		{"json with unknown member", JSON, `{"entityKey":"aw==","externalEvent":"aGk=","bogus":1}`, false},
		{"binary garbage", Binary, "\xff\xff\xff", false},
		{"json garbage", JSON, `{"entityKey":`, false},
		{"no entity key", JSON, `{"externalEvent":"aGk="}`, false},
		{"no payload", JSON, `{"entityKey":"aw=="}`, false},
		{"unknown format", Format("xml"), "<x/>", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, canon, err := decodeEnvelope(tc.format, []byte(tc.rec))
			if !tc.ok {
				if !errors.Is(err, &agent.Error{Reason: agent.ReasonEnvelopeInvalid}) {
					t.Fatalf("err = %v, want envelope_invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(env, valid) {
				t.Fatalf("env = %v", env)
			}
			want, _ := proto.MarshalOptions{Deterministic: true}.Marshal(valid)
			if string(canon) != string(want) {
				t.Fatal("canonical bytes differ")
			}
		})
	}
}

func TestDeadLetterDetailIsValidUTF8(t *testing.T) {
	rec := &pb.ActivationErrorRecord{}
	b := drive.Marshal(drive.DeadLetter([]byte{0xff}, 0, agent.ReasonEnvelopeInvalid, errors.New("bad \xff byte"), []byte("rec")))
	if err := proto.Unmarshal(b, rec); err != nil || rec.Reason != "envelope_invalid" || string(rec.EntityKey) != "\xff" || string(rec.GetRawRecord()) != "rec" {
		t.Fatalf("dead letter %v, %v", rec, err)
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"entityKey":"aw==","externalEvent":"aGk="}`), true)
	f.Add([]byte{0x0a, 0x01, 'k', 0x1a, 0x00}, false)
	f.Fuzz(func(t *testing.T, rec []byte, json bool) {
		format := Binary
		if json {
			format = JSON
		}
		env, canon, err := decodeEnvelope(format, rec)
		if err != nil {
			if !errors.Is(err, &agent.Error{Reason: agent.ReasonEnvelopeInvalid}) {
				t.Fatalf("untyped error %v", err)
			}
			d := drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), agent.ReasonEnvelopeInvalid, err, rec)
			if !bytes.Equal(d.GetRawRecord(), rec) {
				t.Fatal("the dead letter does not carry the record")
			}
			return
		}
		again := &pb.AgentEnvelope{}
		if proto.Unmarshal(canon, again) != nil || !proto.Equal(again, env) || len(env.EntityKey) == 0 || env.Payload == nil {
			t.Fatal("accepted envelope does not round trip or is not actionable")
		}
	})
}
