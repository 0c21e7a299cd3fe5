package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Trace attribute keys beyond the OpenTelemetry GenAI conventions (gen_ai.*).
const (
	AttrAgent       = "beamagents.agent"
	AttrStatus      = "beamagents.status"              // ACTIVATION_END: ok, suspended, failed, timeout
	AttrCache       = "beamagents.cache"               // LLM_CALL: hit, miss, digest_only_hit
	AttrCacheHit    = "beamagents.cache_hit"           // LLM_CALL: true or false
	AttrDivergence  = "beamagents.provider_divergence" // LLM_CALL: true when a digest-only hit's fresh answer differs
	AttrCase        = "beamagents.case"                // LLM_CALL: the admitted case
	AttrIntentID    = "beamagents.intent_id"
	AttrIntentKind  = "beamagents.intent_kind"
	AttrAttempt     = "beamagents.attempt"
	AttrPending     = "beamagents.pending_intents"
	AttrDeadline    = "beamagents.deadline_ms"
	AttrEscalations = "beamagents.escalations"
)

// traceID derives the 16-byte trace id of activation seq of entity: the first 16 bytes of
// SHA-256 over a domain tag, the length-prefixed entity key and seq. Deterministic, so a
// replay traces identically.
func traceID(entity []byte, seq int64) []byte {
	var buf [128]byte
	b := append(buf[:0], "beamagents.trace.v1\x00"...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(entity)))
	b = append(b, entity...)
	b = binary.BigEndian.AppendUint64(b, uint64(seq))
	sum := sha256.Sum256(b)
	return bytes.Clone(sum[:16])
}

// spanID derives an 8-byte span id from the trace id, the step, the event type and a
// discriminator that tells apart events of the same type at the same step.
func spanID(trace []byte, step uint32, typ pb.TraceEvent_EventType, disc string) []byte {
	var buf [96]byte
	b := append(buf[:0], "beamagents.span.v1\x00"...)
	b = append(b, trace...)
	b = binary.BigEndian.AppendUint32(b, step)
	b = binary.BigEndian.AppendUint32(b, uint32(typ))
	b = append(b, disc...)
	sum := sha256.Sum256(b)
	return bytes.Clone(sum[:8])
}

// tracer emits the trace events of one activation.
type tracer struct {
	entity []byte
	seq    int64
	id     []byte
	root   []byte
	agent  string
	out    *Outputs
}

func newTracer(agent string, entity []byte, seq int64, out *Outputs) *tracer {
	id := traceID(entity, seq)
	return &tracer{entity: entity, seq: seq, id: id, root: spanID(id, 0, pb.TraceEvent_ACTIVATION_START, ""), agent: agent, out: out}
}

func (t *tracer) emit(typ pb.TraceEvent_EventType, step uint32, disc string, atMs int64, attrs map[string]string) {
	span, parent := spanID(t.id, step, typ, disc), t.root
	if typ == pb.TraceEvent_ACTIVATION_START {
		span, parent = t.root, nil
	}
	if attrs == nil {
		attrs = map[string]string{}
	}
	attrs[AttrAgent] = t.agent
	t.out.Traces = append(t.out.Traces, &pb.TraceEvent{
		TraceId: t.id, SpanId: span, ParentSpanId: parent, EntityKey: t.entity, Seq: t.seq,
		StepIndex: step, EventType: typ, Attributes: attrs, StartMs: atMs, EndMs: atMs,
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
