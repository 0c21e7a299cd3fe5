package records_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

func TestDecodeEnvelope(t *testing.T) {
	valid := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 5, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	bin, _ := proto.Marshal(valid)
	for _, tc := range []struct {
		name   string
		format records.Format
		rec    string
		ok     bool
	}{
		{"binary", records.Binary, string(bin), true},
		{"json", records.JSON, `{"entityKey":"aw==","eventTimeMs":"5","externalEvent":"aGk="}`, true},
		{"json with unknown member", records.JSON, `{"entityKey":"aw==","externalEvent":"aGk=","bogus":1}`, false},
		{"binary garbage", records.Binary, "\xff\xff\xff", false},
		{"json garbage", records.JSON, `{"entityKey":`, false},
		{"no entity key", records.JSON, `{"externalEvent":"aGk="}`, false},
		{"no payload", records.JSON, `{"entityKey":"aw=="}`, false},
		{"unknown format", records.Format("xml"), "<x/>", false},
		{"a budget grant (set by the runtime only)", records.JSON, `{"entityKey":"aw==","externalEvent":"aGk=","budgetGrant":{"tokens":"100"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, canon, err := records.DecodeEnvelope(tc.format, []byte(tc.rec))
			if !tc.ok {
				if !errors.Is(err, records.ErrEnvelope) {
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

func TestCheckEnvelope(t *testing.T) {
	for _, tc := range []struct {
		env    *pb.AgentEnvelope
		detail string
	}{
		{nil, "no envelope"},
		{&pb.AgentEnvelope{Payload: &pb.AgentEnvelope_ExternalEvent{}}, "entity_key is empty"},
		{&pb.AgentEnvelope{EntityKey: []byte("k")}, "no payload"},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_ExternalEvent{}}, ""},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{Note: strings.Repeat("n", records.MaxApprovalNoteBytes)}}}, ""},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{Note: strings.Repeat("n", records.MaxApprovalNoteBytes+1)}}},
			"the approval's note is 4097 bytes; at most 4096"},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{Approved: true, ArgsJson: ` {"a":"1"}`}}}, ""},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{ArgsJson: `{"a":"1"}`}}}, "a rejection carries edited arguments"},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{Approved: true, ArgsJson: `["a"]`}}}, "the approval's edited arguments are not one JSON object"},
		{&pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Approval_{Approval: &pb.AgentEnvelope_Approval{Approved: true, ArgsJson: `{"a":`}}}, "the approval's edited arguments are not one JSON object"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "go", SignalId: "s1", EntityKey: []byte("k")}), ""},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: strings.Repeat("n", 256), SignalId: strings.Repeat("i", 256), Payload: make([]byte, 64<<10), EntityKey: []byte("k")}), ""},
		{signalEnv(&pb.AgentEnvelope_Signal{SignalId: "s1", EntityKey: []byte("k")}), "the signal's name must be 1-256 bytes of UTF-8"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: strings.Repeat("n", 257), SignalId: "s1", EntityKey: []byte("k")}), "the signal's name must be 1-256 bytes of UTF-8"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "\xff", SignalId: "s1", EntityKey: []byte("k")}), "the signal's name must be 1-256 bytes of UTF-8"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "go", EntityKey: []byte("k")}), "the signal's id must be 1-256 bytes"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "go", SignalId: strings.Repeat("i", 257), EntityKey: []byte("k")}), "the signal's id must be 1-256 bytes"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "go", SignalId: "s1", Payload: make([]byte, 64<<10+1), EntityKey: []byte("k")}), "the signal's payload is 65537 bytes; at most 65536"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "go", SignalId: "s1"}), "the signal's entity_key is not the envelope's"},
		{signalEnv(&pb.AgentEnvelope_Signal{Name: "go", SignalId: "s1", EntityKey: []byte("other")}), "the signal's entity_key is not the envelope's"},
	} {
		err := records.CheckEnvelope(tc.env)
		var e *records.Error
		if tc.detail == "" && err != nil || tc.detail != "" && (!errors.As(err, &e) || e.Code != records.CodeEnvelope || e.Detail != tc.detail) {
			t.Fatalf("%v: %v, want %q", tc.env, err, tc.detail)
		}
	}
}

func signalEnv(sig *pb.AgentEnvelope_Signal) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_Signal_{Signal: sig}}
}

func TestFormatOf(t *testing.T) {
	for name, want := range map[string]records.Format{"a.jsonl": records.JSON, "in/*.JSON": records.JSON, "a.binpb": records.Binary, "a": records.Binary} {
		if got := records.FormatOf(name); got != want {
			t.Fatalf("%s: %s", name, got)
		}
	}
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"entityKey":"aw==","externalEvent":"aGk="}`), true)
	f.Add([]byte{0x0a, 0x01, 'k', 0x1a, 0x00}, false)
	f.Add([]byte(`{"entityKey":"aw==","signal":{"name":"go","signalId":"s1","entityKey":"aw=="}}`), true)
	f.Fuzz(func(t *testing.T, rec []byte, json bool) {
		format := records.Binary
		if json {
			format = records.JSON
		}
		env, canon, err := records.DecodeEnvelope(format, rec)
		if err != nil {
			if !errors.Is(err, records.ErrEnvelope) || canon != nil {
				t.Fatalf("untyped error %v, or bytes with it", err)
			}
			return
		}
		again := &pb.AgentEnvelope{}
		if proto.Unmarshal(canon, again) != nil || !proto.Equal(again, env) || len(env.EntityKey) == 0 || env.Payload == nil {
			t.Fatal("accepted envelope does not round trip or is not actionable")
		}
	})
}

func TestDeadLetter(t *testing.T) {
	d := records.WithRawRecord(records.DeadLetter([]byte("k"), 5, "envelope_invalid", "bad \xff byte\u00a0here"), []byte("rec"))
	if d.GetReason() != "envelope_invalid" || d.GetDetail() != "bad \uFFFD byte here" || d.GetEventTimeMs() != 5 || string(d.GetRawRecord()) != "rec" {
		t.Fatalf("%v", d)
	}
	if records.WithRawRecord(records.DeadLetter(nil, 0, "x", ""), nil).GetFailedInput() != nil {
		t.Fatal("an empty record set a failed input")
	}
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	got := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(records.WithEnvelope(records.DeadLetter(nil, 0, "x", ""), env).GetEnvelope(), got); err != nil || !proto.Equal(got, env) {
		t.Fatalf("envelope %v, %v", got, err)
	}
}
