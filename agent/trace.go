package agent

import (
	"strconv"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// tracer emits the trace events of one attempt of an activation: the run of the core that
// starts it (an external event) or continues it (a tool result, an approval, a deadline
// firing). Each attempt is one span, opened by ACTIVATION_START and closed by ACTIVATION_END
// (both carry its id); every other event of the attempt is a child span of it, and every
// later attempt's span is a child of the first attempt's, the activation's root span.
// docs/identity.md states the derivations.
type tracer struct {
	entity []byte
	seq    int64
	id     []byte
	root   []byte // the first attempt's span: activation at step 0
	span   []byte // this attempt's span
	parent []byte // this attempt's parent span: none for the root
	agent  string
	out    *hostapi.Outputs
}

func newTracer(agent string, entity []byte, seq int64, out *hostapi.Outputs) *tracer {
	id := tracing.TraceID(entity, seq)
	root := tracing.SpanID(entity, seq, tracing.RoleActivation, 0)
	return &tracer{entity: entity, seq: seq, id: id[:], root: root[:], agent: agent, out: out}
}

// begin opens the attempt driven by kind, entering the activation at step entry.
func (t *tracer) begin(kind string, entry uint32, atMs int64) {
	role := tracing.RoleActivation
	if kind == tracing.KindTimer {
		role = tracing.RoleTimer
	}
	t.span, t.parent = t.root, nil
	if role != tracing.RoleActivation || entry != 0 {
		span := tracing.SpanID(t.entity, t.seq, role, entry)
		t.span, t.parent = span[:], t.root
	}
	t.event(pb.TraceEvent_ACTIVATION_START, entry, t.span, t.parent, atMs, map[string]string{
		tracing.AttrActivationKind: kind,
		tracing.AttrOperationName:  tracing.OpInvokeAgent,
		tracing.AttrAgentName:      t.agent,
	})
}

// finish closes the attempt at step with status.
func (t *tracer) finish(status string, step uint32, atMs int64) {
	t.event(pb.TraceEvent_ACTIVATION_END, step, t.span, t.parent, atMs, map[string]string{tracing.AttrActivationStatus: status})
}

// emit records an event of typ at step inside the attempt.
func (t *tracer) emit(typ pb.TraceEvent_EventType, step uint32, atMs int64, attrs map[string]string) {
	span := tracing.SpanID(t.entity, t.seq, tracing.EventRole(typ), step)
	t.event(typ, step, span[:], t.span, atMs, attrs)
}

func (t *tracer) event(typ pb.TraceEvent_EventType, step uint32, span, parent []byte, atMs int64, attrs map[string]string) {
	attrs[tracing.AttrAgent] = t.agent
	t.out.Traces = append(t.out.Traces, &pb.TraceEvent{
		TraceId: t.id, SpanId: span, ParentSpanId: parent, EntityKey: t.entity, Seq: t.seq,
		StepIndex: step, EventType: typ, Attributes: attrs, StartMs: atMs, EndMs: atMs,
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
