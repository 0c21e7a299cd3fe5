package cli_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamagents/beamagents/internal/testkit/llmtest"
)

var (
	devLatencyKeys  = flag.Int("devlatency.keys", 200, "BenchmarkDevModelLatency: keys, one event and one model call each")
	devLatencyN     = flag.Int("devlatency.n", 64, "BenchmarkDevModelLatency: --model_concurrency")
	devLatencyDelay = flag.Duration("devlatency.delay", 500*time.Millisecond, "BenchmarkDevModelLatency: the model's latency per call")
)

// BenchmarkDevModelLatency runs `dev` (the bundled binary, the support agent) against a
// loopback OpenAI-compatible server that answers every request after devlatency.delay, and
// feeds devlatency.keys keys one event each through --follow: every event is one model call
// and one final reply. It reports the calls per second from the events' arrival to the last
// final reply, and x_ideal, that rate over the provider-bound ideal (devlatency.n calls in
// flight, each taking the delay): the figure `run` is held to under the same model.
func BenchmarkDevModelLatency(b *testing.B) {
	b.StopTimer() // only from the events' arrival to the last reply
	dir := b.TempDir()
	bin := filepath.Join(dir, "beamagents")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/beamagents").CombinedOutput(); err != nil {
		b.Fatalf("building beamagents: %v\n%s", err, out)
	}
	var asked atomic.Int64
	srv := llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		asked.Add(1)
		return llmtest.Reply{Text: `{"case":"support.reply","fields":{"support.reply.text":"Noted, thank you."}}`, InputTokens: 120, OutputTokens: 12}
	})
	srv.Delay = *devLatencyDelay
	defer srv.Close()
	keys := *devLatencyKeys
	finals := regexp.MustCompile(`(?m)^final reply `)
	for i := range b.N {
		stateDir := filepath.Join(dir, fmt.Sprintf("state-%d", i))
		follow := filepath.Join(dir, fmt.Sprintf("events-%d.jsonl", i))
		dev := startDev(b, bin, stateDir, []string{"MODEL_KEY=sk-local"}, "--agent", "support", "--listen", "127.0.0.1:0",
			"--model", "openai", "--base_url", srv.BaseURL(), "--api_key", "env:MODEL_KEY", "--model_name", "local-model",
			"--model_concurrency", fmt.Sprint(*devLatencyN), "--follow", follow)
		var lines strings.Builder
		for k := range keys {
			fmt.Fprintf(&lines, `{"key":"bench-%d-%d","body":"Where is my order A-%d?"}`+"\n", i, k, k)
		}
		before := asked.Load()
		b.StartTimer()
		start := time.Now()
		if err := os.WriteFile(follow, []byte(lines.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		for deadline := start.Add(30 * time.Minute); len(finals.FindAllString(dev.stdout.String(), -1)) < keys; time.Sleep(20 * time.Millisecond) {
			if strings.Contains(dev.stdout.String(), "dead letter") || time.Now().After(deadline) {
				b.Fatalf("dev did not answer every key:\n%s\n%s", dev.stdout, dev.stderr)
			}
		}
		elapsed := time.Since(start)
		b.StopTimer()
		dev.stop(b)
		calls := asked.Load() - before
		if calls != int64(keys) {
			b.Fatalf("%d model calls for %d keys", calls, keys)
		}
		rate := float64(calls) / elapsed.Seconds()
		ideal := float64(*devLatencyN) / devLatencyDelay.Seconds()
		b.ReportMetric(rate, "calls/s")
		b.ReportMetric(rate/ideal, "x_ideal")
		b.ReportMetric(elapsed.Seconds(), "run_s")
	}
}
