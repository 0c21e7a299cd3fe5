package otlpexport_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/otlpreceiver"
	"github.com/beamagents/beamagents/otlpexport"
)

var (
	traceID = bytes.Repeat([]byte{0xab}, 16)
	rootID  = []byte{1, 2, 3, 4, 5, 6, 7, 8}
	callID  = []byte{9, 10, 11, 12, 13, 14, 15, 16}
)

func events() []*pb.TraceEvent {
	return []*pb.TraceEvent{
		{TraceId: traceID, SpanId: rootID, EntityKey: []byte("customer-1"), Seq: 3, EventType: pb.TraceEvent_ACTIVATION_START,
			Attributes: map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}, StartMs: 1000, EndMs: 1500},
		{TraceId: traceID, SpanId: callID, ParentSpanId: rootID, EntityKey: []byte("customer-1"), Seq: 3, StepIndex: 1, EventType: pb.TraceEvent_LLM_CALL,
			Attributes: map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted", "gen_ai.usage.input_tokens": "182",
				"gen_ai.usage.output_tokens": "31", "gen_ai.usage.cache_read.input_tokens": "128", "beamagents.cache": "miss"}, StartMs: 1100, EndMs: 1400},
	}
}

func attr(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue()
		}
	}
	return nil
}

// Exported over OTLP, gRPC and HTTP, to a real receiver on loopback: the spans keep the
// events' trace and span ids and parentage, their GenAI attributes (token counts as
// integers) and the event's identity.
func TestExportKeepsIdsParentageAndAttributes(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		start    func() (*otlpreceiver.Receiver, error)
	}{
		{otlpexport.GRPC, otlpreceiver.StartGRPC},
		{otlpexport.HTTP, otlpreceiver.StartHTTP},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			r, err := tc.start()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx := context.Background()
			exp, err := otlpexport.NewExporter(ctx, otlpexport.Options{Endpoint: r.Endpoint, Protocol: tc.protocol, Insecure: true})
			if err != nil {
				t.Fatal(err)
			}
			spans, err := otlpexport.Spans(events())
			if err != nil {
				t.Fatal(err)
			}
			if err := exp.ExportSpans(ctx, spans); err != nil {
				t.Fatal(err)
			}
			if err := exp.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got := r.Spans()
			if len(got) != 2 {
				t.Fatalf("%d spans received", len(got))
			}
			root, call := got[0], got[1]
			switch {
			case !bytes.Equal(root.GetTraceId(), traceID) || !bytes.Equal(call.GetTraceId(), traceID):
				t.Errorf("trace ids %x %x", root.GetTraceId(), call.GetTraceId())
			case !bytes.Equal(root.GetSpanId(), rootID) || !bytes.Equal(call.GetSpanId(), callID):
				t.Errorf("span ids %x %x", root.GetSpanId(), call.GetSpanId())
			case len(root.GetParentSpanId()) != 0 || !bytes.Equal(call.GetParentSpanId(), rootID):
				t.Errorf("parents %x %x", root.GetParentSpanId(), call.GetParentSpanId())
			case root.GetName() != "invoke_agent support" || call.GetName() != "chat scripted":
				t.Errorf("names %q %q", root.GetName(), call.GetName())
			case call.GetKind() != tracepb.Span_SPAN_KIND_CLIENT:
				t.Errorf("kind %v", call.GetKind())
			case call.GetStartTimeUnixNano() != 1100e6 || call.GetEndTimeUnixNano() != 1400e6:
				t.Errorf("times %d %d", call.GetStartTimeUnixNano(), call.GetEndTimeUnixNano())
			case attr(call, "gen_ai.usage.input_tokens").GetIntValue() != 182 || attr(call, "gen_ai.usage.output_tokens").GetIntValue() != 31 ||
				attr(call, "gen_ai.usage.cache_read.input_tokens").GetIntValue() != 128:
				t.Errorf("token attributes %v", call.GetAttributes())
			case attr(call, "gen_ai.request.model").GetStringValue() != "scripted" || attr(call, "beamagents.cache").GetStringValue() != "miss":
				t.Errorf("attributes %v", call.GetAttributes())
			case attr(call, "beam_agents.entity_key").GetStringValue() != "customer-1" || attr(call, "beam_agents.seq").GetIntValue() != 3 ||
				attr(call, "beam_agents.step_index").GetIntValue() != 1 || attr(call, "beam_agents.event_type").GetStringValue() != "LLM_CALL":
				t.Errorf("identity attributes %v", call.GetAttributes())
			}
		})
	}
}

// Events whose ids have the wrong length are left out with a typed error; the rest convert.
func TestSpansRefusesBadIds(t *testing.T) {
	evs := events()
	for name, bad := range map[string]*pb.TraceEvent{
		"short trace id":  {TraceId: traceID[:8], SpanId: rootID},
		"long span id":    {TraceId: traceID, SpanId: traceID},
		"bad parent id":   {TraceId: traceID, SpanId: rootID, ParentSpanId: []byte{1}},
		"no ids whatever": {},
	} {
		t.Run(name, func(t *testing.T) {
			spans, err := otlpexport.Spans(append(append([]*pb.TraceEvent{}, evs...), bad))
			var ie *otlpexport.InvalidEventError
			if !errors.Is(err, otlpexport.ErrInvalidEvent) || !errors.As(err, &ie) || ie.Index != 2 {
				t.Fatalf("err = %v", err)
			}
			if len(spans) != 2 {
				t.Fatalf("%d spans", len(spans))
			}
		})
	}
	if _, err := otlpexport.NewExporter(context.Background(), otlpexport.Options{Protocol: "carrier-pigeon"}); err == nil {
		t.Fatal("unknown protocol accepted")
	}
}
