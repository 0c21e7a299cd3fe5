package tracing_test

import (
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// BenchmarkIDs derives the ids the driver derives for every event.
func BenchmarkIDs(b *testing.B) {
	key := []byte("customer-0042")
	b.Run("TraceID", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = tracing.TraceID(key, 7)
		}
	})
	b.Run("SpanID", func(b *testing.B) {
		b.ReportAllocs()
		role := tracing.EventRole(pb.TraceEvent_LLM_CALL)
		for b.Loop() {
			_ = tracing.SpanID(key, 7, role, 3)
		}
	})
	b.Run("EventRole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = tracing.EventRole(pb.TraceEvent_LLM_CALL)
		}
	})
}
