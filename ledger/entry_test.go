package ledger_test

import (
	"bytes"
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/tracing"
)

var table = ledger.Table{Currency: "USD", Models: map[string]ledger.Price{
	"big":   {Input: 2_500_000, Output: 10_000_000, CachedInput: 1_250_000},
	"small": {Input: 150_000, Output: 600_000, CachedInput: 75_000},
}}

func llmCall(attrs map[string]string) *pb.TraceEvent {
	return &pb.TraceEvent{TraceId: []byte("trace-id-0123456"), SpanId: []byte("span0123"), ParentSpanId: []byte("attempt0"),
		EntityKey: []byte("customer-1"), Seq: 3, StepIndex: 1, EventType: pb.TraceEvent_LLM_CALL,
		Attributes: attrs, StartMs: 1_700_000_000_000, EndMs: 1_700_000_000_000}
}

func TestEntry(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		attrs                map[string]string
		model                string
		in, cached, out      int64
		cost                 int64
		hit, priced          bool
		tenant, version, who string
	}{
		{name: "billed call", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrInputTokens: "1000", tracing.AttrOutputTokens: "200",
			tracing.AttrCacheHit: "false", tracing.AttrAgent: "support", tracing.AttrTenant: "acme", tracing.AttrAgentVersion: "v2"},
			// 1000 × 2.5 + 200 × 10 = 4500 micro-units.
			model: "big", in: 1000, out: 200, cost: 4500, priced: true, tenant: "acme", version: "v2", who: "support"},
		{name: "rounded half up once", attrs: map[string]string{tracing.AttrRequestModel: "small", tracing.AttrInputTokens: "3", tracing.AttrOutputTokens: "1"},
			// 3 × 0.15 + 1 × 0.6 = 1.05 → 1.
			model: "small", in: 3, out: 1, cost: 1, priced: true},
		{name: "half rounds up", attrs: map[string]string{tracing.AttrRequestModel: "small", tracing.AttrInputTokens: "10"},
			model: "small", in: 10, cost: 2, priced: true},
		{name: "cache hit costs nothing", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrCacheHit: "true"},
			model: "big", hit: true, priced: true},
		{name: "fallback answered", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrAnsweredBy: "small",
			tracing.AttrResponseModel: "small-2025", tracing.AttrInputTokens: "1000000", tracing.AttrOutputTokens: "1000000"},
			model: "small", in: 1_000_000, out: 1_000_000, cost: 750_000, priced: true},
		{name: "prompt-cache reads at the cached price", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrInputTokens: "3000",
			tracing.AttrCacheReadInputTokens: "2048", tracing.AttrOutputTokens: "200"},
			// 952 × 2.5 + 2048 × 1.25 + 200 × 10 = 2380 + 2560 + 2000 = 6940 micro-units.
			model: "big", in: 3000, cached: 2048, out: 200, cost: 6940, priced: true},
		{name: "prompt-cache reads rounded once", attrs: map[string]string{tracing.AttrRequestModel: "small", tracing.AttrInputTokens: "7",
			tracing.AttrCacheReadInputTokens: "5", tracing.AttrOutputTokens: "1"},
			// 2 × 0.15 + 5 × 0.075 + 1 × 0.6 = 1.275 → 1.
			model: "small", in: 7, cached: 5, out: 1, cost: 1, priced: true},
		{name: "a cache hit's reads cost nothing", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrCacheHit: "true",
			tracing.AttrInputTokens: "3000", tracing.AttrCacheReadInputTokens: "2048"},
			model: "big", in: 3000, cached: 2048, hit: true, priced: true},
		{name: "malformed cache reads", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrInputTokens: "1000", tracing.AttrCacheReadInputTokens: "lots"},
			model: "big", in: 1000, cost: 2500, priced: true},
		{name: "unpriced model", attrs: map[string]string{tracing.AttrRequestModel: "other", tracing.AttrInputTokens: "5"},
			model: "other", in: 5},
		{name: "malformed count", attrs: map[string]string{tracing.AttrRequestModel: "big", tracing.AttrInputTokens: "-5", tracing.AttrOutputTokens: "x"},
			model: "big", priced: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := ledger.Entry(llmCall(tc.attrs), table)
			if !ok {
				t.Fatal("no entry")
			}
			if e.GetResponseModel() != tc.model || e.GetInputTokens() != tc.in || e.GetCachedInputTokens() != tc.cached || e.GetOutputTokens() != tc.out || e.GetCostMicros() != tc.cost ||
				e.GetCacheHit() != tc.hit || e.GetPriced() != tc.priced || e.GetTenant() != tc.tenant || e.GetAgentVersion() != tc.version || e.GetAgent() != tc.who {
				t.Fatalf("got %v", e)
			}
			if string(e.GetEntityKey()) != "customer-1" || e.GetSeq() != 3 || e.GetStepIndex() != 1 || e.GetEventTimeMs() != 1_700_000_000_000 ||
				string(e.GetSpanId()) != "span0123" || string(e.GetAttemptSpanId()) != "attempt0" {
				t.Fatalf("identity: got %v", e)
			}
		})
	}
}

func TestEntryOnlyModelCalls(t *testing.T) {
	for _, typ := range []pb.TraceEvent_EventType{pb.TraceEvent_ACTIVATION_START, pb.TraceEvent_TOOL_CALL, pb.TraceEvent_ERROR} {
		ev := llmCall(map[string]string{tracing.AttrInputTokens: "5"})
		ev.EventType = typ
		if _, ok := ledger.Entry(ev, table); ok {
			t.Errorf("%v gave an entry", typ)
		}
	}
}

// The same trace event gives the same bytes, however often: a retried or replayed
// activation's records deduplicate.
func TestEntryDeterministic(t *testing.T) {
	attrs := map[string]string{tracing.AttrRequestModel: "big", tracing.AttrInputTokens: "7", tracing.AttrOutputTokens: "9", tracing.AttrTenant: "t"}
	var first []byte
	for range 20 {
		e, _ := ledger.Entry(llmCall(attrs), table)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b
		} else if !bytes.Equal(first, b) {
			t.Fatal("bytes differ")
		}
	}
}

func TestCost(t *testing.T) {
	p := ledger.Price{Input: 3, Output: 1_000_000_000_000, CachedInput: 1}
	for _, tc := range []struct {
		in, cached, out, want int64
	}{
		{in: 1_000_000, want: 3},
		{in: 1_000_000, cached: 1_000_000, want: 1},
		{in: 10, cached: 20, want: 0}, // cached beyond input is input
		{out: math.MaxInt64, want: math.MaxInt64},
		{out: 1, want: 1_000_000},
	} {
		if got := ledger.Cost(p, tc.in, tc.cached, tc.out); got != tc.want {
			t.Errorf("Cost(%d, %d, %d) = %d; want %d", tc.in, tc.cached, tc.out, got, tc.want)
		}
	}
}

func TestFormatMicros(t *testing.T) {
	for m, want := range map[int64]string{0: "0.000000", 2_500_000: "2.500000", 1: "0.000001", -1_500_000: "-1.500000"} {
		if got := ledger.FormatMicros(m); got != want {
			t.Errorf("FormatMicros(%d) = %q; want %q", m, got, want)
		}
	}
}
