package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// run --mode batch writes the same files as the streaming path on the same input.
func TestRunModeBatch(t *testing.T) {
	dir := t.TempDir()
	opts, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for _, mode := range []string{"streaming", "batch"} {
		outs[mode] = filepath.Join(dir, mode)
		code, out, errOut := runCLI(t, "", "run", "--agent", opts.Agent, "--input", opts.Input, "--keyring", opts.Keyring,
			"--output_dir", outs[mode], "--mode", mode)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errOut)
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
