package transforms_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/transforms"
)

// The hot-key harness: one key with many external events, through RunAgent (streaming) and
// RunAgentBatch (batch) on Prism against the model-latency harness's loopback server, with
// -latency.n calls allowed in flight and -latency.delay a call, once unsharded and once
// sharded -hotkey.shards ways (agent.Definition.Shards). Unsharded, the key's activations
// run one after another; sharded, each sub-key runs its share apart from the others.
//
//	go test ./transforms -run '^$' -bench HotKey -benchtime 1x [-hotkey.events 1000 -hotkey.shards 64 -latency.n 64 -latency.delay 500ms]

var (
	hotKeyEvents = flag.Int("hotkey.events", 1000, "external events of the one hot key")
	hotShards    = flag.Int("hotkey.shards", 64, "sub-keys of the sharded run")
	hotVariants  = flag.String("hotkey.variants", "", "comma-separated paths to run: streaming, batch (default both)")
)

// hotKeyEntity is the hot key; the latency model answers it with a reply.
const hotKeyEntity = "k-000"

func BenchmarkHotKey(b *testing.B) {
	b.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	var envs []*pb.AgentEnvelope
	for i := range *hotKeyEvents {
		envs = append(envs, ext(hotKeyEntity, t0+int64(i), fmt.Sprintf("%s: reading %d", hotKeyEntity, i)))
	}
	records := envelopes(envs...)
	for _, path := range []string{"streaming", "batch"} {
		if *hotVariants != "" && !strings.Contains(","+*hotVariants+",", ","+path+",") {
			continue
		}
		b.Run(path, func(b *testing.B) {
			var unsharded, sharded time.Duration
			var calls, peak int
			for range b.N {
				d, _, _ := hotKeyRun(b, path == "batch", 1, records)
				unsharded += d
				d, c, p := hotKeyRun(b, path == "batch", *hotShards, records)
				sharded += d
				calls, peak = calls+c, max(peak, p)
			}
			b.ReportMetric(unsharded.Seconds()/float64(b.N), "unsharded_s")
			b.ReportMetric(sharded.Seconds()/float64(b.N), "sharded_s")
			b.ReportMetric(unsharded.Seconds()/sharded.Seconds(), "speedup")
			b.ReportMetric(float64(calls)/sharded.Seconds(), "sharded_calls/s")
			b.ReportMetric(float64(peak), "sharded_peak_in_flight")
		})
	}
}

// hotKeyRun runs records through the agent sharded shards ways (1: not sharded) and returns
// the run's wall time, the model calls and the peak of calls in flight.
func hotKeyRun(b *testing.B, batch bool, shards int, records [][]byte) (time.Duration, int, int) {
	m := newLatencyModel(b, 1, 0, *latencyDelay, false)
	defer m.close()
	opts := transforms.Options{Agent: shardedSupport, Config: []byte(fmt.Sprintf(`{"shards":%d}`, shards)), AllowUnsignedIntents: true,
		Model:            hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: m.baseURL(), APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", MaxAttempts: 1},
		ModelConcurrency: *latencyN}
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, records))
	run := transforms.RunAgent
	if batch {
		run = transforms.RunAgentBatch
	}
	writeOutputs(s, b.TempDir(), run(s, opts, keyed), dead)
	start := time.Now()
	if err := ptest.Run(p); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	if n := len(m.api.Requests()); n != len(records) {
		b.Fatalf("%d model calls for %d events", n, len(records))
	}
	return elapsed, len(m.api.Requests()), m.peakInFlight()
}
