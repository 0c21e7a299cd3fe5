package transforms

import (
	"context"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// MetricsNamespace is the namespace of every Beam metric of the runtime.
const MetricsNamespace = "beamagents"

// meters are RunAgent's Beam metrics beyond the step counters of runtime: what the
// activations did, read from their results (and trace events), and the state bytes and wall
// time of each DoFn call. The wall clock is read for the latency metric only; nothing it
// reads reaches an output or the state.
type meters struct {
	cacheHits, cacheMisses, inputTokens, outputTokens beam.Counter
	intents, finals                                   beam.Counter
	latency, bytesRead, bytesWritten                  beam.Distribution
}

func newMeters() *meters {
	c := func(n string) beam.Counter { return beam.NewCounter(MetricsNamespace, n) }
	d := func(n string) beam.Distribution { return beam.NewDistribution(MetricsNamespace, n) }
	return &meters{
		cacheHits: c("cache_hits"), cacheMisses: c("cache_misses"),
		inputTokens: c("input_tokens"), outputTokens: c("output_tokens"),
		intents: c("intents"), finals: c("final_replies"),
		latency:   d("activation_latency_us"),
		bytesRead: d("state_bytes_read_per_call"), bytesWritten: d("state_bytes_written_per_call"),
	}
}

// result counts what one core call produced.
func (m *meters) result(ctx context.Context, res *agent.Result) {
	m.intents.Inc(ctx, int64(len(res.Intents)))
	for _, ti := range res.Intents {
		beam.NewCounter(MetricsNamespace, "intents."+ti.GetKind().String()).Inc(ctx, 1)
	}
	m.finals.Inc(ctx, int64(len(res.Finals)))
	for name, n := range res.Stats.All() {
		beam.NewCounter(MetricsNamespace, "state."+name).Inc(ctx, n)
	}
	for _, ev := range res.Traces {
		if ev.GetEventType() != pb.TraceEvent_LLM_CALL {
			continue
		}
		a := ev.GetAttributes()
		if a[tracing.AttrCacheHit] == "true" {
			m.cacheHits.Inc(ctx, 1)
		} else {
			m.cacheMisses.Inc(ctx, 1)
		}
		if n, err := strconv.ParseInt(a[tracing.AttrInputTokens], 10, 64); err == nil {
			m.inputTokens.Inc(ctx, n)
		}
		if n, err := strconv.ParseInt(a[tracing.AttrOutputTokens], 10, 64); err == nil {
			m.outputTokens.Inc(ctx, n)
		}
	}
}

// timed runs one core call and records its wall time.
func (m *meters) timed(ctx context.Context, call func() *agent.Result) *agent.Result {
	start := time.Now()
	res := call()
	m.latency.Update(ctx, time.Since(start).Microseconds())
	return res
}

// metered wraps a DoFn call's state provider to count the bytes of the Beam state it reads
// and writes, and records them when done.
func (m *meters) metered(ctx context.Context, sp state.Provider, call func(state.Provider) error) error {
	mp := &meteredProvider{Provider: sp}
	err := call(mp)
	m.bytesRead.Update(ctx, mp.read)
	m.bytesWritten.Update(ctx, mp.written)
	return err
}

type meteredProvider struct {
	state.Provider
	read, written int64
}

func size(v any) int64 {
	if b, ok := v.([]byte); ok {
		return int64(len(b))
	}
	return 0
}

func (p *meteredProvider) ReadValueState(id string) (any, []state.Transaction, error) {
	v, tx, err := p.Provider.ReadValueState(id)
	p.read += size(v)
	return v, tx, err
}

func (p *meteredProvider) ReadBagState(id string) ([]any, []state.Transaction, error) {
	vs, tx, err := p.Provider.ReadBagState(id)
	for _, v := range vs {
		p.read += size(v)
	}
	return vs, tx, err
}

func (p *meteredProvider) WriteValueState(tx state.Transaction) error {
	p.written += size(tx.Val)
	return p.Provider.WriteValueState(tx)
}

func (p *meteredProvider) WriteBagState(tx state.Transaction) error {
	p.written += size(tx.Val)
	return p.Provider.WriteBagState(tx)
}
