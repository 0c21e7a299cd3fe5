package wire

import "mime"

// Attributes read on input messages and written on output messages.
const (
	// AttrContentType selects the input encoding: ContentTypeJSON means protojson, anything
	// else (or no attribute) binary. Outputs carry ContentTypeProto.
	AttrContentType  = "content-type"
	ContentTypeJSON  = "application/json"
	ContentTypeProto = "application/x-protobuf"
	// DefaultEnvelopeIDAttribute names the producer's envelope id: two messages with the same
	// value for one entity key are one delivery.
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

// MaxAttrValue is Pub/Sub's limit on an attribute value's length in bytes.
const MaxAttrValue = 1024

// IsJSON reports whether attrs' content-type attribute names JSON (its media type is
// application/json, whatever its parameters).
func IsJSON(attrs map[string]string) bool {
	ct := attrs[AttrContentType]
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == ContentTypeJSON
}
