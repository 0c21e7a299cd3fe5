package console_test

import (
	"strings"
	"testing"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// The trace of an attempt that failed because the circuit breaker refused its model call is
// its ERROR event alone; the waterfall says the reason and that the breaker refused.
func TestLayoutBreakerRefusal(t *testing.T) {
	ev := event("k", 0, pb.TraceEvent_ERROR, 0, T0, T0, map[string]string{tracing.AttrReason: "model_error",
		tracing.AttrErrorType: "model_circuit_open", tracing.AttrOperationName: tracing.OpChat, tracing.AttrRequestModel: "gpt-test"})
	w := console.Layout(ev.GetTraceId(), []*pb.TraceEvent{ev})
	if !w.HasError || len(w.Rows) != 1 || w.Rows[0].Label != "error model_error (model_circuit_open)" || w.Rows[0].Depth != 0 {
		t.Fatalf("waterfall %+v", w)
	}
	other := event("k", 0, pb.TraceEvent_ERROR, 2, T0, T0, map[string]string{tracing.AttrReason: "activation_timeout", tracing.AttrErrorType: "activation_timeout"})
	if l := console.Layout(other.GetTraceId(), []*pb.TraceEvent{other}).Rows[0].Label; strings.Contains(l, "(") {
		t.Fatalf("a timeout's label %q repeats its reason", l)
	}
}
