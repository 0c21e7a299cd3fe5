package transforms

import (
	"context"
	"strconv"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/tracing"
)

// MetricsNamespace is the namespace of every Beam metric of the runtime.
const MetricsNamespace = "beamagents"

// meters are RunAgent's Beam metrics beyond the step counters of runtime: what the
// activations did, read from their results (and trace events), and the state bytes and wall
// time of each DoFn call. The wall clock is read for the latency metric only; nothing it
// reads reaches an output or the state.
type meters struct {
	latency, bytesRead, bytesWritten beam.Distribution
}

func newMeters() *meters {
	d := func(n string) beam.Distribution { return beam.NewDistribution(MetricsNamespace, n) }
	return &meters{
		latency:   d("activation_latency_us"),
		bytesRead: d("state_bytes_read_per_call"), bytesWritten: d("state_bytes_written_per_call"),
	}
}

// result counts what one core call produced.
func (m *meters) result(ctx context.Context, res *host.Result) {
	count(res, func(name string, n int64) {
		beam.NewCounter(MetricsNamespace, name).Inc(ctx, n)
		noteProgress(name, n)
	})
}

// noteProgress adds a counter increment to the process's status (package progress).
func noteProgress(name string, n int64) {
	switch name {
	case "activations":
		progress.Activations(n)
	case "dead_letters":
		progress.DeadLetters(n)
	case "input_tokens", "output_tokens":
		progress.Tokens(n)
	}
}

// count adds what one core call did to the counters, through add. The records it produced
// (intents, final replies) are counted from the outputs (pipeline.CountRecords).
func count(res *host.Result, add func(name string, n int64)) {
	for name, n := range res.Stats.All() {
		add("state."+name, n)
	}
	for _, ev := range res.Traces {
		if ev.GetEventType() != pb.TraceEvent_LLM_CALL {
			continue
		}
		a := ev.GetAttributes()
		if a[tracing.AttrCacheHit] == "true" {
			add("cache_hits", 1)
		} else {
			add("cache_misses", 1)
		}
		if n, err := strconv.ParseInt(a[tracing.AttrInputTokens], 10, 64); err == nil {
			add("input_tokens", n)
		}
		if n, err := strconv.ParseInt(a[tracing.AttrOutputTokens], 10, 64); err == nil {
			add("output_tokens", n)
		}
	}
}

// A tally sums counter increments, to add them to the Beam counters once: for a DoFn that
// runs many core calls per element.
type tally map[string]int64

func (t tally) add(name string, n int64) {
	t[name] += n
	noteProgress(name, n)
}

func (t tally) flush(ctx context.Context) {
	for name, n := range t {
		beam.NewCounter(MetricsNamespace, name).Inc(ctx, n)
	}
}

// timed runs one core call and records its wall time.
func (m *meters) timed(ctx context.Context, call func() *host.Result) *host.Result {
	res, us := clocked(call)
	m.latency.Update(ctx, us)
	return res
}

// clocked runs one core call and returns its wall time in microseconds.
func clocked(call func() *host.Result) (*host.Result, int64) {
	start := time.Now()
	res := call()
	return res, time.Since(start).Microseconds()
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
