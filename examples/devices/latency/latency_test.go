package latency_test

import (
	"bytes"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/devices"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// The devices agent under model latency: every key sends one anomaly, which makes two model
// calls (the inline lookup, then the dispatch, whose intent suspends the key), and with
// resume the dispatch's result, which makes a third (the final answer). It reports model
// calls per second over the whole run, their ratio to the provider-bound ideal (n calls per
// delay) over the whole run (x_ideal) and over the time the server was busy, from the first
// request to the last answer (x_ideal_served), and the peak of requests in flight.
//
//	go test ./examples/devices/latency -run '^$' -bench DevicesModelLatency -benchtime 1x [-latency.keys 500 -latency.n 64 -latency.delay 500ms]

var (
	latencyKeys  = flag.Int("latency.keys", 500, "keys per run (each one anomaly, or one anomaly and its dispatch result)")
	latencyN     = flag.Int("latency.n", 64, "model calls in flight allowed (ModelConcurrency)")
	latencyDelay = flag.Duration("latency.delay", 500*time.Millisecond, "the loopback model's answer delay")
)

const t0 = int64(1767225600000)

func key(i int) string { return fmt.Sprintf("dev-%d", 1000+i) }

func input(keys int, resume bool) [][]byte {
	var out [][]byte
	add := func(env *pb.AgentEnvelope) {
		b, _ := proto.Marshal(env)
		out = append(out, b)
	}
	for i := range keys {
		k := key(i)
		add(&pb.AgentEnvelope{EntityKey: []byte(k), EventTimeMs: t0 + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(fmt.Sprintf(`{"device_id":"%d","milli_c":91000}`, 1000+i))}})
		if resume {
			// The dispatch is the handler's sixth operation (position 5) of the key's first activation.
			add(&pb.AgentEnvelope{EntityKey: []byte(k), EventTimeMs: t0 + 600_000 + int64(i),
				Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{IntentId: intent.ID([]byte(k), 0, 5), EntityKey: []byte(k),
					Status: pb.ToolResult_OK, Payload: []byte(`{"ticket":"T-1","eta_minutes":30}`), CompletedAtMs: t0 + 600_000}}})
		}
	}
	return out
}

// server answers as a provider with native tools would: a lookup call, then (after the
// lookup's tool message) a dispatch call, then (after the dispatch's) the final text.
type server struct {
	*llmtest.Server
	mu          sync.Mutex
	first, last time.Time
}

func newServer(delay time.Duration) *server {
	s := &server{}
	s.Server = llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		now := time.Now()
		s.mu.Lock()
		if s.first.IsZero() || now.Add(-delay).Before(s.first) {
			s.first = now.Add(-delay)
		}
		s.last = now
		s.mu.Unlock()
		id := fmt.Sprint(1000)
		if i := bytes.Index(body, []byte("Device ")); i >= 0 {
			id = strings.Fields(string(body[i+len("Device "):]))[0]
		}
		switch {
		case bytes.Contains(body, []byte(`"tool_call_id":"call_dispatch"`)):
			return llmtest.Reply{Text: "Dispatched a technician to device " + id + ".", InputTokens: 300, OutputTokens: 20}
		case bytes.Contains(body, []byte(`"tool_call_id":"call_lookup"`)):
			return llmtest.Reply{InputTokens: 260, OutputTokens: 40, ToolCalls: []llmtest.ToolCall{{ID: "call_dispatch", Name: provider.WireName(devices.ToolDispatch),
				Arguments: `{"device_id":` + id + `,"reason":"reads 91.0 °C, over the band"}`}}}
		}
		return llmtest.Reply{InputTokens: 210, OutputTokens: 18, ToolCalls: []llmtest.ToolCall{{ID: "call_lookup", Name: provider.WireName(devices.ToolLookup), Arguments: `{"device_id":` + id + `}`}}}
	})
	s.Delay = delay
	return s
}

func (s *server) span() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last.Sub(s.first)
}

func BenchmarkDevicesModelLatency(b *testing.B) {
	b.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	for _, v := range []struct {
		name          string
		batch, resume bool
	}{
		{"streaming/anomaly", false, false}, {"streaming/dispatch_resume", false, true},
		{"batch/anomaly", true, false}, {"batch/dispatch_resume", true, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			records := input(*latencyKeys, v.resume)
			var calls, peak int
			var elapsed, served time.Duration
			for range b.N {
				srv := newServer(*latencyDelay)
				opts := transforms.Options{Agent: devices.Name, AllowUnsignedIntents: true,
					Model:            hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: srv.BaseURL(), APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", MaxAttempts: 1},
					ModelConcurrency: *latencyN}
				p, s := beam.NewPipelineWithRoot()
				keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, records))
				run := transforms.RunAgent
				if v.batch {
					run = transforms.RunAgentBatch
				}
				out := run(s, opts, keyed)
				dir := b.TempDir()
				cols := map[string]beam.PCollection{pipeline.IntentsName: out.Intents, pipeline.TracesName: out.Traces,
					pipeline.FinalsName: out.Finals, pipeline.SnapshotsName: out.Snapshots, pipeline.DeadLettersName: beam.Flatten(s, dead, out.DeadLetters)}
				for _, o := range pipeline.Outputs() {
					pipeline.WriteRecords(s, dir, o.Name, o.Type, cols[o.Name])
				}
				start := time.Now()
				if err := ptest.Run(p); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				served += srv.span()
				calls += len(srv.Requests())
				peak = max(peak, srv.Peak())
				srv.Close()
			}
			want := 2 * *latencyKeys * b.N
			if v.resume {
				want = 3 * *latencyKeys * b.N
			}
			if calls != want {
				b.Fatalf("%d model calls; want %d", calls, want)
			}
			perSec := float64(calls) / elapsed.Seconds()
			ideal := float64(*latencyN) / latencyDelay.Seconds()
			b.ReportMetric(perSec, "calls/s")
			b.ReportMetric(perSec/ideal, "x_ideal")
			b.ReportMetric(float64(calls)/served.Seconds()/ideal, "x_ideal_served")
			b.ReportMetric(float64(peak), "peak_in_flight")
			b.ReportMetric(float64(*latencyN), "allowed_in_flight")
		})
	}
}

func TestMain(m *testing.M) { ptest.Main(m) }
