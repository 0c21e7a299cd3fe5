package otlpexport_test

import (
	"fmt"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/otlpexport"
)

// A model call's trace event becomes a client span under its activation's span, with the
// event's ids and GenAI attributes.
func ExampleSpans() {
	spans, err := otlpexport.Spans([]*pb.TraceEvent{{
		TraceId: []byte("0123456789abcdef"), SpanId: []byte("llm-call"), ParentSpanId: []byte("activate"),
		EntityKey: []byte("customer-1"), EventType: pb.TraceEvent_LLM_CALL, StartMs: 1000, EndMs: 1250,
		Attributes: map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x", "gen_ai.usage.input_tokens": "182"},
	}})
	if err != nil {
		panic(err)
	}
	s := spans[0]
	fmt.Println(s.Name(), s.SpanKind(), s.SpanContext().SpanID(), "parent", s.Parent().SpanID(), s.EndTime().Sub(s.StartTime()))
	for _, kv := range s.Attributes()[:3] {
		fmt.Println(kv.Key, kv.Value.String())
	}
	// Output:
	// chat gpt-x client 6c6c6d2d63616c6c parent 6163746976617465 250ms
	// gen_ai.operation.name chat
	// gen_ai.request.model gpt-x
	// gen_ai.usage.input_tokens 182
}
