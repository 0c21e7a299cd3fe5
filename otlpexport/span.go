package otlpexport

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// ErrInvalidEvent is what an *InvalidEventError matches with errors.Is.
var ErrInvalidEvent = errors.New("otlpexport: trace event cannot be a span")

// An InvalidEventError names an event that Spans left out, and why.
type InvalidEventError struct {
	Index  int // the event's position in the input
	Detail string
}

func (e *InvalidEventError) Error() string {
	return fmt.Sprintf("otlpexport: trace event %d cannot be a span: %s", e.Index, e.Detail)
}

func (e *InvalidEventError) Is(target error) bool { return target == ErrInvalidEvent }

// Scope is the instrumentation scope of the exported spans.
var Scope = instrumentation.Scope{Name: "github.com/beamagents/beamagents"}

// Resource describes the exporting service: service.name "beamagents".
func Resource() *resource.Resource {
	return resource.NewSchemaless(attribute.String("service.name", "beamagents"))
}

// Spans converts events into read-only spans carrying their ids, in order of first appearance.
// Events that share a trace and span id are one span (an attempt's ACTIVATION_START and
// ACTIVATION_END, an escalation's re-emitted INTENT_EMITTED): it runs from the earliest start
// to the latest end, keeps the first value of each attribute, and records every event it
// merged as a span event, so nothing an event said is lost. Events that cannot be spans are
// left out and reported, joined, in the error.
func Spans(events []*pb.TraceEvent) ([]sdktrace.ReadOnlySpan, error) {
	res := Resource()
	var stubs []tracetest.SpanStub
	var firsts []*pb.TraceEvent // each stub's first event, until a second one merges
	at := map[[24]byte]int{}
	var errs []error
	for i, ev := range events {
		st, err := stub(ev)
		if err != nil {
			errs = append(errs, &InvalidEventError{Index: i, Detail: err.Error()})
			continue
		}
		var id [24]byte
		tid, sid := st.SpanContext.TraceID(), st.SpanContext.SpanID()
		copy(id[:16], tid[:])
		copy(id[16:], sid[:])
		if j, ok := at[id]; ok {
			merge(&stubs[j], firsts[j], ev, st)
			firsts[j] = nil
			continue
		}
		at[id] = len(stubs)
		st.Resource = res
		st.InstrumentationScope = Scope
		stubs = append(stubs, st)
		firsts = append(firsts, ev)
	}
	spans := make([]sdktrace.ReadOnlySpan, len(stubs))
	for i := range stubs {
		spans[i] = stubs[i].Snapshot()
	}
	return spans, errors.Join(errs...)
}

// merge folds next (the stub of event ev) into st, a span of the same id whose first event,
// first, is not yet recorded as a span event (nil once it is).
func merge(st *tracetest.SpanStub, first, ev *pb.TraceEvent, next tracetest.SpanStub) {
	if first != nil {
		st.Events = append(st.Events, event(first, st.StartTime, st.Attributes))
	}
	st.Events = append(st.Events, event(ev, next.StartTime, next.Attributes))
	if next.StartTime.Before(st.StartTime) {
		st.StartTime = next.StartTime
	}
	if next.EndTime.After(st.EndTime) {
		st.EndTime = next.EndTime
	}
	have := map[attribute.Key]bool{}
	for _, kv := range st.Attributes {
		have[kv.Key] = true
	}
	for _, kv := range next.Attributes {
		if !have[kv.Key] {
			st.Attributes = append(st.Attributes, kv)
		}
	}
	if next.Status.Code == codes.Error {
		st.Status = next.Status
	}
}

func event(ev *pb.TraceEvent, at time.Time, attrs []attribute.KeyValue) sdktrace.Event {
	return sdktrace.Event{Name: strings.ToLower(ev.GetEventType().String()), Time: at, Attributes: attrs}
}

func stub(ev *pb.TraceEvent) (tracetest.SpanStub, error) {
	var tid trace.TraceID
	var sid, psid trace.SpanID
	if len(ev.GetTraceId()) != len(tid) || len(ev.GetSpanId()) != len(sid) {
		return tracetest.SpanStub{}, fmt.Errorf("trace id of %d bytes and span id of %d bytes, want 16 and 8", len(ev.GetTraceId()), len(ev.GetSpanId()))
	}
	copy(tid[:], ev.GetTraceId())
	copy(sid[:], ev.GetSpanId())
	st := tracetest.SpanStub{
		Name:        spanName(ev),
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}),
		SpanKind:    trace.SpanKindInternal,
		StartTime:   time.UnixMilli(ev.GetStartMs()),
		EndTime:     time.UnixMilli(max(ev.GetEndMs(), ev.GetStartMs())),
		Attributes:  attributes(ev),
	}
	switch p := ev.GetParentSpanId(); len(p) {
	case 0:
	case len(psid):
		copy(psid[:], p)
		st.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: psid, TraceFlags: trace.FlagsSampled})
	default:
		return tracetest.SpanStub{}, fmt.Errorf("parent span id of %d bytes, want 8", len(p))
	}
	if ev.GetEventType() == pb.TraceEvent_LLM_CALL {
		st.SpanKind = trace.SpanKindClient
	}
	if ev.GetEventType() == pb.TraceEvent_ERROR {
		st.Status = sdktrace.Status{Code: codes.Error, Description: ev.GetAttributes()["error.type"]}
	}
	return st, nil
}

// spanName follows the GenAI conventions' "{operation} {target}" where the event names an
// operation, and is the lower-case event type otherwise.
func spanName(ev *pb.TraceEvent) string {
	a := ev.GetAttributes()
	op := a["gen_ai.operation.name"]
	switch t := ev.GetEventType(); {
	case op != "":
	case t == pb.TraceEvent_ACTIVATION_START || t == pb.TraceEvent_ACTIVATION_END:
		return "activation" // one span per attempt: its START and END events share the id
	default:
		return strings.ToLower(ev.GetEventType().String())
	}
	for _, k := range []string{"gen_ai.request.model", "gen_ai.tool.name", "gen_ai.agent.name"} {
		if t := a[k]; t != "" {
			return op + " " + t
		}
	}
	return op
}

// intAttributes are the attributes the GenAI conventions type as integers.
var intAttributes = map[string]bool{"gen_ai.usage.input_tokens": true, "gen_ai.usage.output_tokens": true, "gen_ai.usage.cache_read.input_tokens": true}

func attributes(ev *pb.TraceEvent) []attribute.KeyValue {
	a := ev.GetAttributes()
	kv := make([]attribute.KeyValue, 0, len(a)+4)
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if n, err := strconv.ParseInt(a[k], 10, 64); err == nil && intAttributes[k] {
			kv = append(kv, attribute.Int64(k, n))
		} else {
			kv = append(kv, attribute.String(k, a[k]))
		}
	}
	key := string(ev.GetEntityKey())
	if !utf8.ValidString(key) {
		key = fmt.Sprintf("%x", ev.GetEntityKey())
	}
	return append(kv,
		attribute.String("beam_agents.entity_key", key),
		attribute.Int64("beam_agents.seq", ev.GetSeq()),
		attribute.Int64("beam_agents.step_index", int64(ev.GetStepIndex())),
		attribute.String("beam_agents.event_type", ev.GetEventType().String()))
}
