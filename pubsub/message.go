package pubsub

import (
	"mime"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/transforms"
)

// Attributes read on input messages and written on output messages.
const (
	// AttrContentType selects the input encoding: ContentTypeJSON means protojson, anything
	// else (or no attribute) binary. Outputs carry ContentTypeProto.
	AttrContentType  = "content-type"
	ContentTypeJSON  = "application/json"
	ContentTypeProto = "application/x-protobuf"
	// DefaultEnvelopeIDAttribute names the producer's envelope id: two messages with the same
	// value for one entity key are one delivery (see Options.EnvelopeIDAttribute).
	DefaultEnvelopeIDAttribute = "envelope_id"

	// AttrType is the full protobuf name of an output's data, or TypeRejectedInput.
	AttrType = "type"
	// AttrIntentID and AttrTraceID (lowercase hex) are set when the output message has them.
	AttrIntentID = "intent_id"
	AttrTraceID  = "trace_id"
	// AttrSchemaVersion is SchemaVersion: the wire package of the data.
	AttrSchemaVersion = "schema_version"
	SchemaVersion     = "beam_agents.v1"

	// TypeRejectedInput marks an errors-topic message that is a rejected input, byte for byte,
	// with its original attributes, plus AttrReason, AttrDetail and AttrOriginalMessageID.
	TypeRejectedInput     = "beamagents.rejected_input"
	AttrReason            = "reason"
	AttrDetail            = "detail"
	AttrOriginalMessageID = "original_message_id"
)

// maxAttrValue bounds a detail attribute (Pub/Sub limits values to 1024 bytes).
const maxAttrValue = 1024

// isJSON reports whether the message's content-type attribute names JSON.
func isJSON(attrs map[string]string) bool {
	ct := attrs[AttrContentType]
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == ContentTypeJSON
}

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
	if isJSON(m.GetAttributes()) {
		format = transforms.JSON
	}
	env, canon, err := transforms.DecodeEnvelope(format, m.GetData())
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
	attrs[AttrType] = TypeRejectedInput
	attrs[AttrReason] = reason
	attrs[AttrDetail] = truncate(err.Error(), maxAttrValue)
	attrs[AttrOriginalMessageID] = m.GetMessageId()
	attrs[AttrSchemaVersion] = SchemaVersion
	return &pubsubpb.PubsubMessage{Data: m.GetData(), Attributes: attrs, OrderingKey: m.GetOrderingKey()}
}

// truncate cuts s to at most n bytes, dropping a UTF-8 sequence the cut splits.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
