package transforms_test

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// BenchmarkShadowLatency is the model-latency harness's streaming run of -latency.keys keys,
// one event each, without and with a shadow of the same agent beside it (its own step, its
// own -latency.n calls in flight, its own loopback server, the comparison step):
// production's model calls per second and their ratio to the provider-bound ideal over the
// whole run (x_ideal) and over the time production's server was busy (x_ideal_served: the
// runner's start-up and shutdown left out), which a shadow must leave at least 0.8, and the
// share of production's busy time in which the shadow's server was busy too (overlap: a
// shadow that ran after production would leave x_ideal_served alone and prove nothing).
//
//	go test ./transforms -run '^$' -bench ShadowLatency -benchtime 1x [-latency.keys 1000 -latency.n 64 -latency.delay 500ms]
func BenchmarkShadowLatency(b *testing.B) {
	b.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	for _, shadow := range []bool{false, true} {
		name := "production"
		if shadow {
			name = "with_shadow"
		}
		b.Run(name, func(b *testing.B) {
			keys, n := *latencyKeys, *latencyN
			records := latencyInput(keys, false)
			var elapsed, served time.Duration
			var calls, peak int
			var overlap float64
			for range b.N {
				m := newLatencyModel(b, 1, 0, *latencyDelay, false)
				opts := transforms.Options{Agent: support.Name, Config: agentConfig(b, nil), AllowUnsignedIntents: true,
					Model:            hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: m.baseURL(), APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", MaxAttempts: 1},
					ModelConcurrency: n}
				p, s := beam.NewPipelineWithRoot()
				keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, records))
				out := transforms.RunAgent(s, opts, keyed)
				dir := b.TempDir()
				writeOutputs(s, dir, out, dead)
				var sm *latencyModel
				if shadow {
					so := transforms.ShadowOptions{Agent: support.Name, Config: opts.Config, ModelConcurrency: n}.Shadowed(opts)
					sm = newLatencyModel(b, 2, 0, *latencyDelay, false)
					defer sm.close()
					so.Model.BaseURL = sm.baseURL()
					sout := transforms.RunAgent(s.Scope(transforms.ShadowScope), so, keyed)
					pipeline.WriteRecords(s, dir, pipeline.ShadowDivergencesName, (&pb.ShadowComparison{}).ProtoReflect().Descriptor().FullName(),
						transforms.CompareShadow(s, out, sout, 0))
				}
				start := time.Now()
				if err := ptest.Run(p); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				served += m.span()
				calls += len(m.api.Requests())
				peak = max(peak, m.peakInFlight())
				if sm != nil {
					overlap += m.overlap(sm)
				}
				m.close()
			}
			prodPerSec := float64(keys*b.N) / elapsed.Seconds()
			ideal := float64(n) / latencyDelay.Seconds()
			b.ReportMetric(prodPerSec, "production_calls/s")
			b.ReportMetric(prodPerSec/ideal, "x_ideal")
			b.ReportMetric(float64(keys*b.N)/served.Seconds()/ideal, "x_ideal_served")
			b.ReportMetric(float64(calls)/float64(b.N), "production_model_calls")
			b.ReportMetric(float64(peak), "peak_in_flight")
			if shadow {
				b.ReportMetric(overlap/float64(b.N), "overlap")
			}
		})
	}
}
