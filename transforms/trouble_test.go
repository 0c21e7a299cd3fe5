package transforms_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/model/limit"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// The provider-trouble harness: keys with one model call each through RunAgent and
// RunAgentBatch on Prism, with the default endpoint limits (64 in flight, breaker after 5
// failures, 30 s cool-down, a hold of four cool-downs), against a loopback OpenAI-compatible
// server that answers after -trouble.delay and is in trouble first: a burst of 503s, its
// first connections reset, down and up by turns, or nothing listening at all. It reports
// the dead letters, the whole run's wall time (Prism's start-up and shutdown included), the
// provider-bound ideal (keys over the calls in flight, times the delay) and x_ideal, the
// ideal over the wall time.
//
//	go test ./transforms -run '^$' -bench ProviderTrouble -benchtime 1x -timeout 60m [-trouble.keys 512 -trouble.delay 500ms]
var (
	troubleKeys  = flag.Int("trouble.keys", 512, "keys per provider-trouble run (one model call each)")
	troubleDelay = flag.Duration("trouble.delay", 500*time.Millisecond, "the loopback model's answer delay")
)

func troubleAnswer(delay time.Duration) func(int, []byte) llmtest.Reply {
	return func(_ int, body []byte) llmtest.Reply {
		return llmtest.Reply{Text: reply("hello " + string(entityRe.Find(body))), Hang: delay, InputTokens: 10, OutputTokens: 5}
	}
}

type troubleRun struct {
	finals, dead int
	elapsed      time.Duration
}

// runTrouble runs keys through the pipeline against baseURL with limits lc.
func runTrouble(tb testing.TB, keys int, baseURL string, lc limit.Config, batch bool) troubleRun {
	tb.Helper()
	var envs []*pb.AgentEnvelope
	for i := range keys {
		k := fmt.Sprintf("k-%04d", i)
		envs = append(envs, ext(k, t0+int64(i), k+": where is my order?"))
	}
	dir := tb.TempDir()
	opts := transforms.Options{Agent: support.Name, Config: agentConfig(tb, nil), AllowUnsignedIntents: true,
		Model: hosted.Options{Provider: hosted.OpenAI, Name: "gpt-test", BaseURL: baseURL, APIKey: "env:BEAMAGENTS_TEST_MODEL_KEY", Limits: lc}}
	p, s := beam.NewPipelineWithRoot()
	keyed, dead := transforms.DecodeEnvelopes(s, transforms.Binary, beam.CreateList(s, envelopes(envs...)))
	run := transforms.RunAgent
	if batch {
		run = transforms.RunAgentBatch
	}
	writeOutputs(s, dir, run(s, opts, keyed), dead)
	start := time.Now()
	if err := ptest.Run(p); err != nil {
		tb.Fatal(err)
	}
	r := troubleRun{elapsed: time.Since(start)}
	r.finals = countLines(tb, filepath.Join(dir, pipeline.FinalsName+".jsonl"))
	r.dead = countLines(tb, filepath.Join(dir, pipeline.DeadLettersName+".jsonl"))
	return r
}

func countLines(tb testing.TB, path string) int {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// A burst of 503s and a burst of reset connections cost no key its reply, on the
// streaming and the batch path (the default limits, but for a cool-down that lets the first
// probe go after 200 ms).
func TestProviderTroubleLosesNothing(t *testing.T) {
	t.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	for _, sc := range llmtest.Troubles()[:2] {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%t", sc.Name, batch), func(t *testing.T) {
				url, closer := sc.Serve(llmtest.OpenAI, troubleAnswer(50*time.Millisecond))
				defer closer()
				const keys = 96
				if r := runTrouble(t, keys, url, limit.Config{BreakerCooldownMs: 3200}, batch); r.finals != keys || r.dead != 0 {
					t.Fatalf("%d finals, %d dead letters; want %d and none", r.finals, r.dead, keys)
				}
			})
		}
	}
}

func BenchmarkProviderTrouble(b *testing.B) {
	b.Setenv("BEAMAGENTS_TEST_MODEL_KEY", "sk-test")
	for _, sc := range llmtest.Troubles() {
		for _, path := range []string{"streaming", "batch"} {
			b.Run(sc.Name+"/"+path, func(b *testing.B) {
				var r troubleRun
				for range b.N {
					url, closer := sc.Serve(llmtest.OpenAI, troubleAnswer(*troubleDelay))
					r = runTrouble(b, *troubleKeys, url, limit.Config{}, path == "batch")
					closer()
				}
				ideal := time.Duration(float64(*troubleKeys) / limit.DefaultConcurrency * float64(*troubleDelay))
				b.ReportMetric(float64(r.dead), "dead_letters")
				b.ReportMetric(float64(r.finals), "finals")
				b.ReportMetric(r.elapsed.Seconds(), "run_s")
				b.ReportMetric(ideal.Seconds(), "ideal_s")
				b.ReportMetric(ideal.Seconds()/r.elapsed.Seconds(), "x_ideal")
			})
		}
	}
}
