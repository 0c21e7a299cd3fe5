package ledger

import (
	"math"
	"math/bits"
	"strconv"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// Entry returns the ledger record of a trace event priced by t, and false for an event that
// is not a model call (LLM_CALL). It reads nothing but ev and t.
func Entry(ev *pb.TraceEvent, t Table) (*pb.LedgerEntry, bool) {
	if ev.GetEventType() != pb.TraceEvent_LLM_CALL {
		return nil, false
	}
	a := ev.GetAttributes()
	e := &pb.LedgerEntry{
		EntityKey:         ev.GetEntityKey(),
		Tenant:            a[tracing.AttrTenant],
		Agent:             a[tracing.AttrAgent],
		AgentVersion:      a[tracing.AttrAgentVersion],
		Seq:               ev.GetSeq(),
		StepIndex:         ev.GetStepIndex(),
		TraceId:           ev.GetTraceId(),
		SpanId:            ev.GetSpanId(),
		AttemptSpanId:     ev.GetParentSpanId(),
		EventTimeMs:       ev.GetStartMs(),
		RequestModel:      a[tracing.AttrRequestModel],
		ResponseModel:     a[tracing.AttrAnsweredBy],
		ProviderModel:     a[tracing.AttrResponseModel],
		InputTokens:       count(a[tracing.AttrInputTokens]),
		CachedInputTokens: count(a[tracing.AttrCacheReadInputTokens]),
		OutputTokens:      count(a[tracing.AttrOutputTokens]),
		CacheHit:          a[tracing.AttrCacheHit] == "true",
	}
	if e.ResponseModel == "" {
		e.ResponseModel = e.RequestModel
	}
	p, ok := t.Lookup(e.ResponseModel)
	e.Priced = ok
	if ok && !e.CacheHit {
		e.CostMicros = Cost(p, e.InputTokens, e.CachedInputTokens, e.OutputTokens)
	}
	return e, true
}

// Entries returns the ledger records of traces, in their order.
func Entries(traces []*pb.TraceEvent, t Table) []*pb.LedgerEntry {
	var out []*pb.LedgerEntry
	for _, ev := range traces {
		if e, ok := Entry(ev, t); ok {
			out = append(out, e)
		}
	}
	return out
}

// count reads a token count attribute; absent or malformed counts are 0 (a count that was
// not observed costs nothing).
func count(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Cost is the cost in micro-units of a call of input tokens (cached of them read from the
// provider's prompt cache) and output tokens at p: the exact sum of tokens × price per
// million, divided by a million and rounded half up once. It saturates at math.MaxInt64.
func Cost(p Price, input, cached, output int64) int64 {
	cached = min(max(cached, 0), max(input, 0))
	var hi, lo uint64
	add := func(tokens, perMillion int64) {
		h, l := bits.Mul64(uint64(max(tokens, 0)), uint64(max(perMillion, 0)))
		var c uint64
		lo, c = bits.Add64(lo, l, 0)
		hi += h + c
	}
	add(input-cached, p.Input)
	add(cached, p.CachedInput)
	add(output, p.Output)
	var c uint64
	lo, c = bits.Add64(lo, micro/2, 0)
	hi += c
	if hi >= micro {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, micro)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Totals sum ledger records.
type Totals struct {
	Calls, CacheHits, Unpriced                         int64
	InputTokens, CachedInputTokens, OutputTokens, Cost int64 // Cost in micro-units
}

// Add adds e to t.
func (t *Totals) Add(e *pb.LedgerEntry) {
	t.Calls++
	if e.GetCacheHit() {
		t.CacheHits++
	}
	if !e.GetPriced() {
		t.Unpriced++
	}
	t.InputTokens += e.GetInputTokens()
	t.CachedInputTokens += e.GetCachedInputTokens()
	t.OutputTokens += e.GetOutputTokens()
	t.Cost += e.GetCostMicros()
}

// FormatMicros writes an amount of micro-units as a decimal: 2500000 as "2.500000".
func FormatMicros(m int64) string {
	sign := ""
	u := uint64(m)
	if m < 0 {
		sign, u = "-", -u
	}
	return sign + strconv.FormatUint(u/micro, 10) + "." + pad6(u%micro)
}

func pad6(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for len(s) < 6 {
		s = "0" + s
	}
	return s
}
