package pubsub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gpubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
)

func TestDecodeMessage(t *testing.T) {
	pub := time.UnixMilli(1767225600000)
	env := func(ms int64) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: ms, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	}
	msg := func(data []byte, attrs map[string]string) *pubsubpb.PubsubMessage {
		return &pubsubpb.PubsubMessage{MessageId: "m1", Data: data, Attributes: attrs, PublishTime: timestamppb.New(pub)}
	}
	cases := []struct {
		name      string
		msg       *pubsubpb.PubsubMessage
		opts      pubsub.Options
		wantMs    int64
		wantDedup string
		malformed bool
	}{
		{"binary, envelope time wins", msg(marshal(t, env(5)), map[string]string{"ts": "7"}), pubsub.Options{EventTimeAttribute: "ts"}, 5, "m:m1", false},
		{"attribute when the envelope has none", msg(marshal(t, env(0)), map[string]string{"ts": "7"}), pubsub.Options{EventTimeAttribute: "ts"}, 7, "m:m1", false},
		{"attribute in RFC 3339", msg(marshal(t, env(0)), map[string]string{"ts": "2026-01-01T00:00:01Z"}), pubsub.Options{EventTimeAttribute: "ts"}, 1767225601000, "m:m1", false},
		{"publish time last", msg(marshal(t, env(0)), map[string]string{"ts": "garbage"}), pubsub.Options{EventTimeAttribute: "ts"}, pub.UnixMilli(), "m:m1", false},
		{"protojson by content-type", msg([]byte(`{"entityKey":"aw==","eventTimeMs":"9","externalEvent":"aGk="}`), map[string]string{"content-type": "application/json; charset=utf-8"}), pubsub.Options{}, 9, "m:m1", false},
		{"envelope id attribute", msg(marshal(t, env(5)), map[string]string{"envelope_id": "e-1"}), pubsub.Options{}, 5, "e:e-1", false},
		{"envelope ids off", msg(marshal(t, env(5)), map[string]string{"envelope_id": "e-1"}), pubsub.Options{EnvelopeIDAttribute: "-"}, 5, "m:m1", false},
		{"custom envelope id attribute", msg(marshal(t, env(5)), map[string]string{"eid": "x"}), pubsub.Options{EnvelopeIDAttribute: "eid"}, 5, "e:x", false},
		{"JSON without the content-type is binary, malformed", msg([]byte(`{"entityKey":"aw=="}`), nil), pubsub.Options{}, pub.UnixMilli(), "m:m1", true},
		{"no payload", msg(marshal(t, &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 3}), nil), pubsub.Options{}, 3, "m:m1", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := pubsub.DecodeMessage(c.msg, c.opts)
			if c.malformed {
				if !errors.Is(err, &pubsub.Error{Code: pubsub.CodeMalformed}) || !errors.Is(err, &agent.Error{Reason: records.ReasonEnvelopeInvalid}) {
					t.Fatalf("err = %v, want malformed_message wrapping envelope_invalid", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if d.EventMs != c.wantMs || d.DedupID != c.wantDedup {
				t.Errorf("event %d dedup %q, want %d %q", d.EventMs, d.DedupID, c.wantMs, c.wantDedup)
			}
			if err == nil {
				got := &pb.AgentEnvelope{}
				mustUnmarshal(t, d.Canonical, got)
				if got.GetEventTimeMs() != c.wantMs {
					t.Errorf("canonical envelope's event time %d, want %d (filled in)", got.GetEventTimeMs(), c.wantMs)
				}
			}
		})
	}
}

// Any bytes with any content-type decode to an envelope or a typed error; never a panic.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"entityKey":"aw==","externalEvent":"aGk="}`), "application/json", "ts", "1")
	f.Add([]byte{0x0a, 0x01, 'k', 0x1a, 0x01, 'x'}, "", "", "")
	f.Add([]byte{0xff, 0xff}, "application/json;", "ts", "2026-01-01T00:00:00Z")
	f.Fuzz(func(t *testing.T, data []byte, ct, attr, val string) {
		m := &pubsubpb.PubsubMessage{MessageId: "m", Data: data, Attributes: map[string]string{"content-type": ct, attr: val}}
		d, err := pubsub.DecodeMessage(m, pubsub.Options{EventTimeAttribute: attr})
		if err != nil {
			if !errors.Is(err, &pubsub.Error{Code: pubsub.CodeMalformed}) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(d.Envelope.GetEntityKey()) == 0 || d.Canonical == nil {
			t.Fatalf("accepted without key or bytes: %v", d.Envelope)
		}
	})
}

func TestParseNames(t *testing.T) {
	for _, c := range []struct {
		in   string
		sub  bool
		good bool
	}{
		{"projects/p/subscriptions/s", true, true},
		{"projects/p/topics/t", false, true},
		{"projects/p/topics/t", true, false},
		{"s", true, false},
		{"projects//subscriptions/s", true, false},
		{"projects/p/subscriptions/s/x", true, false},
	} {
		var err error
		if c.sub {
			_, err = pubsub.ParseSubscription(c.in)
		} else {
			_, err = pubsub.ParseTopic(c.in)
		}
		if (err == nil) != c.good || err != nil && !errors.Is(err, &pubsub.Error{Code: pubsub.CodeBadName}) {
			t.Errorf("%q: %v", c.in, err)
		}
	}
}

func TestOutputMessage(t *testing.T) {
	ti := &pb.ToolIntent{IntentId: "i-1", EntityKey: []byte{0xff, 'k'}, TraceId: []byte{0xab, 0xcd}}
	m, err := pubsub.OutputMessage("beam_agents.v1.ToolIntent", marshal(t, ti))
	if err != nil {
		t.Fatal(err)
	}
	if m.GetAttributes()[wire.AttrIntentID] != "i-1" || m.GetAttributes()[wire.AttrTraceID] != "abcd" ||
		m.GetAttributes()[wire.AttrType] != "beam_agents.v1.ToolIntent" || m.GetOrderingKey() != "b64:/2s=" {
		t.Errorf("attributes %v, ordering key %q", m.GetAttributes(), m.GetOrderingKey())
	}
	if _, err := pubsub.OutputMessage("beam_agents.v1.ToolIntent", []byte{0xff}); err == nil {
		t.Error("a broken record was accepted")
	}
}

// The acker renews the ack deadline of what it holds, and releases it (deadline 0) when
// closed, so Pub/Sub redelivers at once.
func TestAckerExtendsThenReleases(t *testing.T) {
	e := newEnv(t)
	id := e.publish(marshal(t, &pb.AgentEnvelope{EntityKey: []byte("k")}), nil)
	ctx := context.Background()
	c, err := gpubsub.NewClient(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: e.sub, MaxMessages: 1})
	if err != nil || len(resp.GetReceivedMessages()) != 1 {
		t.Fatalf("pull: %v", err)
	}
	a := pubsub.NewAcker(c.SubscriptionAdminClient, e.sub, 20*time.Second, time.Minute, time.Minute)
	a.Hold([]string{resp.GetReceivedMessages()[0].GetAckId()})
	deadline := time.Now().Add(20 * time.Second)
	for len(srv.Message(id).Modacks) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	a.Close()
	mods := srv.Message(id).Modacks
	if len(mods) < 2 || mods[0].AckDeadline != 20 || mods[len(mods)-1].AckDeadline != 0 {
		t.Errorf("modacks %+v, want an extension to 20s and then a release", mods)
	}
}
