package transforms_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/transforms"
)

// The model-latency harness: keys through RunAgent and RunAgentBatch on Prism against a
// loopback OpenAI-compatible server that answers every request after a fixed delay, as a
// hosted model does, with up to -latency.n calls in flight. It reports model calls per
// second over the whole run, their ratio to the provider-bound ideal (n calls per delay)
// over the whole run (x_ideal) and over the time the server was busy, from the first
// request to the last answer (x_ideal_served: the runner's start-up and shutdown left out),
// and the peak of requests in flight the server saw.
//
//	go test ./transforms -run '^$' -bench ModelLatency -benchtime 1x [-latency.keys 1000 -latency.n 64 -latency.delay 500ms]

var (
	latencyKeys     = flag.Int("latency.keys", 1000, "keys per model-latency run (each one event, or one event and its tool result)")
	latencyN        = flag.Int("latency.n", 64, "model calls in flight allowed (ModelConcurrency)")
	latencyDelay    = flag.Duration("latency.delay", 500*time.Millisecond, "the loopback model's answer delay")
	latencySerialN  = flag.Int("latency.serial_keys", 20, "keys of the one-call-at-a-time variants")
	latencyVariants = flag.String("latency.variants", "", "comma-separated variants to run (default all)")
)

// latencyInput is keys × one external event, or, with resume, every key looking an order up
// and resumed by its tool result: two model calls per key.
func latencyInput(keys int, resume bool) [][]byte {
	var envs []*pb.AgentEnvelope
	for i := range keys {
		k := fmt.Sprintf("k-%03d", i)
		if resume {
			k = fmt.Sprintf("k-%03d1", i) // looksUp
		}
		envs = append(envs, ext(k, t0+int64(i), k+": where is my order?"))
		if resume {
			envs = append(envs, result(k, t0+600_000+int64(i), 0, 0, `{"status":"shipped"}`))
		}
	}
	return envelopes(envs...)
}

func BenchmarkModelLatency(b *testing.B) {
	b.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	for _, v := range []struct {
		name   string
		batch  bool
		resume bool
		serial bool
	}{
		{"streaming/event", false, false, false}, {"streaming/tool_resume", false, true, false},
		{"batch/event", true, false, false}, {"batch/tool_resume", true, true, false},
		{"streaming/event/one_call_at_a_time", false, false, true}, {"batch/event/one_call_at_a_time", true, false, true},
	} {
		if *latencyVariants != "" && !strings.Contains(","+*latencyVariants+",", ","+v.name+",") {
			continue
		}
		b.Run(v.name, func(b *testing.B) {
			keys, n := *latencyKeys, *latencyN
			if v.serial {
				keys, n = *latencySerialN, 1
			}
			records := latencyInput(keys, v.resume)
			var calls, peak int
			var elapsed, served time.Duration
			for range b.N {
				m := newLatencyModel(b, 1, 0, *latencyDelay, false)
				opts := transforms.Options{Agent: support.Name, Config: agentConfig(b, nil), AllowUnsignedIntents: true,
					Model:            hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: m.baseURL(), APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", MaxAttempts: 1},
					ModelConcurrency: n}
				p, s := beam.NewPipelineWithRoot()
				keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, records))
				run := transforms.RunAgent
				if v.batch {
					run = transforms.RunAgentBatch
				}
				writeOutputs(s, b.TempDir(), run(s, opts, keyed), dead)
				start := time.Now()
				if err := ptest.Run(p); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				served += m.span()
				calls += len(m.api.Requests())
				peak = max(peak, m.peakInFlight())
				m.close()
			}
			perSec := float64(calls) / elapsed.Seconds()
			ideal := float64(n) / latencyDelay.Seconds()
			b.ReportMetric(perSec, "calls/s")
			b.ReportMetric(perSec/ideal, "x_ideal")
			b.ReportMetric(float64(calls)/served.Seconds()/ideal, "x_ideal_served")
			b.ReportMetric(float64(peak), "peak_in_flight")
			b.ReportMetric(float64(n), "allowed_in_flight")
		})
	}
}
