package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// run --mode batch writes the same files as the streaming path on the same input.
func TestRunModeBatch(t *testing.T) {
	dir := t.TempDir()
	opts, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	outs, counters := map[string]string{}, map[string]map[string]string{}
	for _, mode := range []string{"streaming", "batch"} {
		outs[mode] = filepath.Join(dir, mode)
		code, out, errOut := runCLI(t, "", "run", "--agent", opts.Agent, "--input", opts.Input, "--keyring", opts.Keyring,
			"--output_dir", outs[mode], "--mode", mode)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errOut)
		}
		counters[mode] = printedCounters(out)
	}
	// The two paths count the same activations, model calls, replay-cache lookups, tokens,
	// intents, final replies and dead letters; only the Beam state and timer counters are the
	// streaming path's own.
	for name, want := range counters["streaming"] {
		if strings.HasPrefix(name, "state") || name == "timer_firings" {
			continue
		}
		if got := counters["batch"][name]; got != want {
			t.Errorf("counter %s: batch %q, streaming %q", name, got, want)
		}
	}
	for _, name := range []string{"activations", "model_calls", "cache_misses", "input_tokens", "intents", "final_replies"} {
		if counters["batch"][name] == "" {
			t.Errorf("the batch path printed no %s counter:\n%v", name, counters["batch"])
		}
	}
	for _, name := range []string{"intents", "traces", "finals", "snapshots", "dead_letters"} {
		for _, ext := range []string{".binpb", ".jsonl"} {
			a, errA := os.ReadFile(filepath.Join(outs["streaming"], name+ext))
			b, errB := os.ReadFile(filepath.Join(outs["batch"], name+ext))
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s%s differs between the streaming and the batch path", name, ext)
			}
			if name == "finals" && len(a) == 0 {
				t.Error("no final replies: the comparison is vacuous")
			}
		}
	}
	if code, _, _ := runCLI(t, "", "run", "--agent", opts.Agent, "--input", opts.Input, "--output_dir", dir, "--mode", "sideways"); code == 0 {
		t.Error("an unknown mode ran")
	}
	runCLI(t, "", "run", "--mode", "streaming", "--agent", "", "--input", "", "--output_dir", "") // reset the process-wide flags
}

// printedCounters reads the counters run prints at the end ("  name value" lines).
func printedCounters(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(line, "  ") {
			if _, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				m[f[0]] = f[1]
			}
		}
	}
	return m
}
