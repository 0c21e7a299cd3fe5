package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The demo runs the example agent on Prism and verifies every intent's signature; its intents
// and trace events carry the ids of docs/identity.md.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCLI(t, "", "demo", "--output_dir", dir)
	if code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"activations       9 (model calls 8)",
		"intents           6, by kind: APPROVAL 2, APPROVAL (escalation) 2, TOOL 2",
		"signatures        6 of 6 verify",
		"final replies     4",
		"state snapshots   1",
		"dead letters      2, by reason: approval_timeout 1, envelope_invalid 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	checkDemoIdentities(t, dir)
	for _, name := range []string{"intents", "traces", "finals", "snapshots", "dead_letters"} {
		for _, ext := range []string{".jsonl", ".binpb"} {
			if _, err := os.Stat(filepath.Join(dir, "output", name+ext)); err != nil {
				t.Error(err)
			}
		}
	}
}
