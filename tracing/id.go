package tracing

import (
	"github.com/google/uuid"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/uuidv5"
)

// Namespace is the UUIDv5 namespace of trace and span ids. It is frozen: changing it changes
// every id.
var Namespace = uuid.MustParse("b1d7c4e2-93a6-5f08-8c31-7e5a9d0f2b46")

// Span roles besides the event types' enum names (see SpanID).
const (
	// RoleActivation names the span of an attempt driven by an envelope: an external event
	// that starts the activation, or a tool result or approval that resumes it.
	RoleActivation = "activation"
	// RoleTimer names the span of an attempt driven by the key's deadline timer.
	RoleTimer = "timer"
)

// TraceID returns the trace id of activation seq of key: the 16 bytes of the UUIDv5 in
// [Namespace] of "<lowercase hex of key>|<seq>". Every attempt of the activation (its start,
// each resumption, each deadline firing) is in this one trace.
func TraceID(key []byte, seq int64) [16]byte {
	var buf [160]byte
	return uuidv5.Sum(uuidv5.Begin(buf[:0], Namespace, key, seq))
}

// SpanID returns the span id of role at index within activation seq of key: the first 8
// bytes of the UUIDv5 in [Namespace] of "<lowercase hex of key>|<seq>|<role>|<index>".
// role is [RoleActivation] or [RoleTimer] (index: the step the attempt entered at) or an
// event type's enum name, [EventRole] (index: the event's step).
func SpanID(key []byte, seq int64, role string, index uint32) [8]byte {
	var buf [192]byte
	u := uuidv5.Sum(uuidv5.Uint(uuidv5.Field(uuidv5.Begin(buf[:0], Namespace, key, seq), role), uint64(index)))
	return [8]byte(u[:8])
}

// EventRole is the span role of an event of type t that is not an attempt's start or end:
// the enum value's name as the schema declares it, for example "LLM_CALL".
func EventRole(t pb.TraceEvent_EventType) string { return t.String() }
