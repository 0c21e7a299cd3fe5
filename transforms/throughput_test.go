package transforms

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/keysched"
	"github.com/beamagents/beamagents/statecodec"
)

// The throughput harness: N envelopes over K keys through RunAgent on Prism with the scripted
// model, against a stateless pipeline of the same shape (decode → GroupByKey → ParDo), and the
// state-layout comparison (one combined cell against one Beam cell per logical cell).
//
//	go test ./transforms -run '^$' -bench Throughput -benchtime 3x [-throughput.n 20000] [-throughput.variants baseline,batch]

var (
	throughputN        = flag.Int("throughput.n", 10000, "envelopes per throughput run")
	throughputVariants = flag.String("throughput.variants", "", "comma-separated variants to run (default all), e.g. baseline,combined/event_time,batch,batch/one_key_at_a_time")
)

func init() {
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []byte, tagged, error](&separateCellsFn{})
	register.DoFn4x0[context.Context, []byte, func(*[]byte) bool, func(int64)](&baselineFn{})
	register.DoFn3x0[context.Context, []byte, func(int64)](&countBundleFn{})
	register.Function2x0[context.Context, int64](countFinals)
	register.Emitter1[int64]()
}

// separateCellsFn is RunAgent with the other layout: one Beam value cell per logical cell,
// named by the cell ids. It exists to measure the layout choice.
type separateCellsFn struct {
	Options Options

	Seq, Memory, Cache, Continuation, Pending, Inbox state.Value[[]byte]
	Buffer                                           state.Bag[[]byte]
	Timer                                            timers.EventTime

	rt *runtime
}

func newSeparateCellsFn(o Options) *separateCellsFn {
	v := func(c statecodec.Cell) state.Value[[]byte] { return state.MakeValueState[[]byte](string(c)) }
	return &separateCellsFn{Options: o,
		Seq: v(statecodec.CellSeq), Memory: v(statecodec.CellMemory), Cache: v(statecodec.CellLLMCache),
		Continuation: v(statecodec.CellContinuation), Pending: v(statecodec.CellPending), Inbox: v(host.CellInbox),
		Buffer: state.MakeBagState[[]byte](OrderBufferID), Timer: timers.InEventTime(TimerFamilyID)}
}

func (f *separateCellsFn) Setup() (err error) {
	f.rt, err = newRuntime(f.Options)
	return err
}

func (f *separateCellsFn) frame() *frame {
	return &frame{rt: f.rt, layout: &separate{cells: map[statecodec.Cell]*state.Value[[]byte]{
		statecodec.CellSeq: &f.Seq, statecodec.CellMemory: &f.Memory, statecodec.CellLLMCache: &f.Cache,
		statecodec.CellContinuation: &f.Continuation, statecodec.CellPending: &f.Pending, host.CellInbox: &f.Inbox,
	}}, obs: noObserver{}, bundle: &keysched.Bundle{}, buffer: &f.Buffer, timer: f.Timer, ordering: f.Options.Ordering, resolution: f.Options.OrderResolutionMs}
}

func (f *separateCellsFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, env []byte, emit tagged) error {
	return f.frame().call(ctx, ts, sp, tp, key, emit).element(env)
}

func (f *separateCellsFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit tagged) error {
	return f.frame().call(ctx, ts, sp, tp, key, emit).timer(t)
}

// separate keeps each cell in its own Beam cell, named by its cell id.
type separate struct {
	cells  map[statecodec.Cell]*state.Value[[]byte]
	nreads int
}

func (l *separate) read(sp state.Provider, cell statecodec.Cell) ([]byte, error) {
	c, ok := l.cells[cell]
	if !ok {
		return nil, fmt.Errorf("unknown cell %s", cell)
	}
	l.nreads++
	b, _, err := c.Read(sp)
	return b, err
}

func (l *separate) write(sp state.Provider, changed map[statecodec.Cell][]byte) (writes, n int, err error) {
	for _, cell := range host.Cells() {
		b, ok := changed[cell]
		if !ok {
			continue
		}
		writes++
		n += len(b)
		if len(b) == 0 {
			err = l.cells[cell].Clear(sp)
		} else {
			err = l.cells[cell].Write(sp, b)
		}
		if err != nil {
			return writes, n, err
		}
	}
	return writes, n, nil
}

func (l *separate) reads() int { return l.nreads }

// baselineFn does the stateless work of the same shape: decode each envelope of the group
// and serialize one reply. It counts its replies as countBundleFn counts a variant's.
type baselineFn struct{ n int64 }

func (f *baselineFn) StartBundle(func(int64))       { f.n = 0 }
func (f *baselineFn) FinishBundle(emit func(int64)) { emit(f.n) }

func (f *baselineFn) ProcessElement(ctx context.Context, key []byte, envs func(*[]byte) bool, _ func(int64)) {
	var b []byte
	for envs(&b) {
		env := &pb.AgentEnvelope{}
		if proto.Unmarshal(b, env) != nil {
			panic("undecodable envelope")
		}
		if _, err := proto.Marshal(&pb.FinalReply{EntityKey: key, Message: string(env.GetExternalEvent())}); err != nil {
			panic(err)
		}
		f.n++
	}
}

// countBundleFn counts the final replies of a bundle and emits the count when it finishes.
// Every variant ends so: its replies' count, one element per bundle, crosses a stage
// boundary (a sum), as a real run's outputs cross one to the file sinks. A stage whose
// outputs all end inside it keeps one of Prism's goroutines polling for the whole bundle
// (its wait for the outputs' end is an already closed channel), which takes a core from
// the bundle's own work; with one output leaving the stage, it waits.
type countBundleFn struct{ n int64 }

func (f *countBundleFn) StartBundle(func(int64))                             { f.n = 0 }
func (f *countBundleFn) ProcessElement(context.Context, []byte, func(int64)) { f.n++ }
func (f *countBundleFn) FinishBundle(emit func(int64))                       { emit(f.n) }

var finalsCounter = beam.NewCounter("beamagents", "bench_finals")

// countFinals adds a count of final replies to the harness's counter.
func countFinals(ctx context.Context, n int64) { finalsCounter.Inc(ctx, n) }

// workload makes n envelopes over k keys, each key's events 100 ms apart, and a model script
// that answers every request with a reply.
func workload(b *testing.B, n, k int) ([][]byte, []byte) {
	s, err := support.Schema()
	if err != nil {
		b.Fatal(err)
	}
	doc := fmt.Sprintf(`{"schema":%q,"root_type_id":%q,"schema_digest":%q,"value":{"case":"support.reply","fields":{"support.reply.text":"Thanks, noted."}}}`+"\n",
		interaction.ValueFormat, s.RootTypeID(), s.Digest())
	script := filepath.Join(b.TempDir(), "script.jsonl")
	os.WriteFile(script, []byte(fmt.Sprintf("{\"response_text\":%q,\"input_tokens\":120,\"output_tokens\":12}\n", doc)), 0o644)
	records := make([][]byte, n)
	for i := range n {
		key := fmt.Sprintf("customer-%05d", i%k)
		rec, _ := proto.Marshal(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: 1767225600000 + int64(i/k)*100,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(fmt.Sprintf("message %d", i))}})
		records[i] = rec
	}
	return records, []byte(fmt.Sprintf(`{"script":%q}`, script))
}

func BenchmarkThroughput(b *testing.B) {
	requirePrismNoSplit() // every variant under the same runner settings
	n := *throughputN
	for _, k := range []int{10, 10000} {
		records, config := workload(b, n, k)
		opts := Options{Agent: support.Name, Config: config, OrderResolutionMs: DefaultOrderMs}
		variants := []struct {
			name string
			fn   func(Options) any
			ord  Ordering
		}{
			{"baseline", nil, ""},
			{"combined/event_time", func(o Options) any { return newRunAgentFn(o) }, EventTimeOrder},
			{"combined/arrival", func(o Options) any { return newRunAgentFn(o) }, ArrivalOrder},
			{"separate/event_time", func(o Options) any { return newSeparateCellsFn(o) }, EventTimeOrder},
			{"separate/arrival", func(o Options) any { return newSeparateCellsFn(o) }, ArrivalOrder},
			{"batch", nil, EventTimeOrder},                   // RunAgentBatch: GroupByKey and the in-memory driver
			{"batch/one_key_at_a_time", nil, EventTimeOrder}, // the same with BatchWorkers 1
		}
		for _, v := range variants {
			if *throughputVariants != "" && !slices.Contains(strings.Split(*throughputVariants, ","), v.name) {
				continue
			}
			b.Run(fmt.Sprintf("K=%d/%s", k, v.name), func(b *testing.B) {
				o := opts
				o.Ordering = v.ord
				var total time.Duration
				counters := map[string]int64{}
				for range b.N {
					p, s := beam.NewPipelineWithRoot()
					keyed, _ := DecodeEnvelopes(s, Binary, beam.CreateList(s, records))
					switch {
					case strings.HasPrefix(v.name, "batch"):
						if v.name != "batch" {
							o.BatchWorkers = 1
						}
						beam.ParDo0(s, countFinals, stats.Sum(s, beam.ParDo(s, &countBundleFn{}, RunAgentBatch(s, o, keyed).Finals)))
					case v.fn == nil:
						beam.ParDo0(s, countFinals, stats.Sum(s, beam.ParDo(s, &baselineFn{}, beam.GroupByKey(s, keyed))))
					default:
						out := splitOutputs(s, beam.ParDo(s, v.fn(o), keyed))
						beam.ParDo0(s, countFinals, stats.Sum(s, beam.ParDo(s, &countBundleFn{}, out.Finals)))
					}
					start := time.Now()
					pr, err := ptest.RunWithMetrics(p)
					total += time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
					for _, c := range pr.Metrics().AllMetrics().Counters() {
						if c.Key.Namespace == "beamagents" {
							counters[c.Key.Name] += c.Result()
						}
					}
				}
				runs := float64(b.N)
				if got := counters["bench_finals"]; got != int64(n*b.N) {
					b.Fatalf("%d replies, want %d", got, n*b.N)
				}
				b.ReportMetric(float64(n)*runs/total.Seconds(), "envelopes/s")
				if acts := float64(counters["activations"]); acts > 0 {
					if acts != float64(n)*runs {
						b.Fatalf("%v activations, want %d", acts, n*b.N)
					}
					b.ReportMetric(float64(counters["state_reads"])/acts, "reads/act")
					b.ReportMetric(float64(counters["state_writes"])/acts, "writes/act")
					b.ReportMetric(float64(counters["state_bytes_written"])/acts, "Bwritten/act")
				}
			})
		}
	}
}
