package drive_test

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

func TestDeadLetterDetailIsValidUTF8(t *testing.T) {
	rec := &pb.ActivationErrorRecord{}
	b := drive.Marshal(drive.DeadLetter([]byte{0xff}, 0, records.ReasonEnvelopeInvalid, errors.New("bad \xff byte"), []byte("rec")))
	if err := proto.Unmarshal(b, rec); err != nil || rec.Reason != "envelope_invalid" || string(rec.EntityKey) != "\xff" || string(rec.GetRawRecord()) != "rec" {
		t.Fatalf("dead letter %v, %v", rec, err)
	}
}

// DecodeEnvelope's refusals are activation errors of reason envelope_invalid, worded as the
// core words its own refusal of the same envelope.
func TestDecodeEnvelopeErrors(t *testing.T) {
	for _, tc := range []struct {
		format records.Format
		rec    string
		text   string
	}{
		{records.JSON, `{"externalEvent":"aGk="}`, "envelope_invalid: entity_key is empty"},
		{records.JSON, `{"entityKey":"aw=="}`, "envelope_invalid: no payload"},
		{records.Format("xml"), "<x/>", `envelope_invalid: unknown record format "xml"`},
	} {
		_, _, err := drive.DecodeEnvelope(tc.format, []byte(tc.rec))
		var e *agent.Error
		if !errors.As(err, &e) || e.Reason != records.ReasonEnvelopeInvalid || err.Error() != tc.text {
			t.Fatalf("%s: %v, want %s", tc.rec, err, tc.text)
		}
	}
	_, _, err := drive.DecodeEnvelope(records.JSON, []byte(`{"entityKey":`))
	if !errors.Is(err, &agent.Error{Reason: records.ReasonEnvelopeInvalid}) || !bytes.HasPrefix([]byte(err.Error()), []byte("envelope_invalid: not a json AgentEnvelope: ")) {
		t.Fatalf("garbage: %v", err)
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"entityKey":"aw==","externalEvent":"aGk="}`), true)
	f.Add([]byte{0x0a, 0x01, 'k', 0x1a, 0x00}, false)
	f.Fuzz(func(t *testing.T, rec []byte, json bool) {
		format := records.Binary
		if json {
			format = records.JSON
		}
		env, canon, err := drive.DecodeEnvelope(format, rec)
		if err != nil {
			if !errors.Is(err, &agent.Error{Reason: records.ReasonEnvelopeInvalid}) {
				t.Fatalf("untyped error %v", err)
			}
			d := drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), records.ReasonEnvelopeInvalid, err, rec)
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
