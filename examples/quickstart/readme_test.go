package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/pipeline"
)

// readmeBlock returns the first sh code block after the README heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no heading %q", heading)
	}
	_, block, ok := strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("no sh block after %q", heading)
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatalf("the sh block after %q is not closed", heading)
	}
	return block
}

// The README's offline run, its commands run verbatim from the repository root as a reader
// would: it answers user-1, opens the ticket for user-2 with a signed intent, takes the
// recorded (signed) tool result and answers user-2, with no dead letter.
func TestReadmeOfflineRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the quickstart binary")
	}
	block := readmeBlock(t, "## Run it offline (recorded answers)")
	out := "out" // the README's --output_dir, in this directory
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the README's commands: %v\n%s", err, stderr.String())
	}
	read := func(name string) [][]byte {
		b, err := os.ReadFile(filepath.Join(out, name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if b = bytes.TrimSpace(b); len(b) == 0 {
			return nil
		}
		return bytes.Split(b, []byte("\n"))
	}
	finals, intents, dead := read(pipeline.FinalsName), read(pipeline.IntentsName), read(pipeline.DeadLettersName)
	if len(finals) != 2 || len(intents) != 1 || len(dead) != 0 {
		t.Fatalf("%d finals, %d intents, %d dead letters; the README says 2, 1, 0\n%s", len(finals), len(intents), len(dead), stderr.String())
	}
	if !bytes.Contains(intents[0], []byte(`"toolName":"tickets.open"`)) || !bytes.Contains(intents[0], []byte(`"signature"`)) {
		t.Fatalf("the intent is not the signed tickets.open call: %s", intents[0])
	}
}
