package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
)

// The example run's Beam metrics: what the activations did, dead letters by reason from every
// step, and per-call distributions of latency and state bytes.
func TestRunMetrics(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "envelopes.jsonl")
	os.WriteFile(in, support.Envelopes, 0o644)
	_, res := runSupport(t, in, "")
	for name, want := range map[string]int64{
		"activations": 9, "model_calls": 8, "cache_misses": 8, "intents": 6, "intents.APPROVAL": 4, "intents.TOOL": 2,
		"final_replies": 4, "input_tokens": 1678, "output_tokens": 244,
		"dead_letters.envelope_invalid": 1, "dead_letters.approval_timeout": 1,
	} {
		if got := res.Counters[name]; got != want {
			t.Errorf("counter %s = %d, want %d", name, got, want)
		}
	}
	if d := res.Distributions["activation_latency_us"]; d.Count != 9 || d.Max < d.Min {
		t.Errorf("activation_latency_us %+v", d)
	}
	for _, name := range []string{"state_bytes_read_per_call", "state_bytes_written_per_call"} {
		if d := res.Distributions[name]; d.Count == 0 || d.Sum == 0 || d.Max < d.Min {
			t.Errorf("%s %+v", name, d)
		}
	}
	if w := res.Distributions["state_bytes_written_per_call"]; w.Sum < res.Counters["state_bytes_written"] {
		t.Errorf("%d state bytes written per call in sum, below the %d the cells were given", w.Sum, res.Counters["state_bytes_written"])
	}
}
