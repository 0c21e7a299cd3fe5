package pubsub

import (
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/transforms"
)

// eventTime is the event time of a message, in this order: the envelope's event_time_ms when
// positive; else the attribute named attr when set and readable (decimal milliseconds since
// the epoch, or RFC 3339); else the publish time. envMs is the decoded envelope's
// event_time_ms (0 when it did not decode).
func eventTime(m *pubsubpb.PubsubMessage, attr string, envMs int64) int64 {
	if envMs > 0 {
		return envMs
	}
	if v, ok := m.GetAttributes()[attr]; ok && attr != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			return ms
		}
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UnixMilli()
		}
	}
	return m.GetPublishTime().AsTime().UnixMilli()
}

// Decoded is an input message made ready for RunAgent.
type Decoded struct {
	Envelope *pb.AgentEnvelope
	// Canonical is the envelope's deterministic binary serialization, with event_time_ms
	// filled in from the message when the producer left it zero.
	Canonical []byte
	EventMs   int64
	// DedupID identifies the delivery: "e:" + the envelope id attribute when the producer set
	// it, else "m:" + the Pub/Sub message id.
	DedupID string
}

// DecodeMessage decodes an input message: its data is a binary AgentEnvelope, or protojson
// when the content-type attribute is application/json. An undecodable or unactionable
// envelope is an *Error with CodeMalformed wrapping the agent.Error (reason envelope_invalid);
// its Decoded still carries the event time and dedup id.
func DecodeMessage(m *pubsubpb.PubsubMessage, o Options) (Decoded, error) {
	format := transforms.Binary
	if wire.IsJSON(m.GetAttributes()) {
		format = transforms.JSON
	}
	env, canon, err := drive.DecodeEnvelope(format, m.GetData())
	d := Decoded{Envelope: env, Canonical: canon, DedupID: dedupID(m, o.envelopeIDAttribute())}
	d.EventMs = eventTime(m, o.EventTimeAttribute, env.GetEventTimeMs())
	if err != nil {
		return d, &Error{Code: CodeMalformed, Detail: "message " + m.GetMessageId(), Err: err}
	}
	if env.GetEventTimeMs() <= 0 {
		env.EventTimeMs = d.EventMs
		if d.Canonical, err = (proto.MarshalOptions{Deterministic: true}).Marshal(env); err != nil {
			return d, &Error{Code: CodeMalformed, Detail: "message " + m.GetMessageId(), Err: err}
		}
	}
	return d, nil
}

func dedupID(m *pubsubpb.PubsubMessage, attr string) string {
	if v := m.GetAttributes()[attr]; v != "" && attr != "" {
		return "e:" + v
	}
	return "m:" + m.GetMessageId()
}

// rejected builds the errors-topic message of a rejected input: its bytes and attributes
// verbatim, plus the type, reason and detail.
func rejected(m *pubsubpb.PubsubMessage, reason string, err error) *pubsubpb.PubsubMessage {
	attrs := make(map[string]string, len(m.GetAttributes())+4)
	for k, v := range m.GetAttributes() {
		attrs[k] = v
	}
	attrs[wire.AttrType] = wire.TypeRejectedInput
	attrs[wire.AttrReason] = reason
	attrs[wire.AttrDetail] = truncate(err.Error(), wire.MaxAttrValue)
	attrs[wire.AttrOriginalMessageID] = m.GetMessageId()
	attrs[wire.AttrSchemaVersion] = wire.SchemaVersion
	return &pubsubpb.PubsubMessage{Data: m.GetData(), Attributes: attrs, OrderingKey: m.GetOrderingKey()}
}

// truncate cuts s to at most n bytes, dropping a UTF-8 sequence the cut splits.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
