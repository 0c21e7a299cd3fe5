package cli

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
)

// runArgs are the run flags of a test, every check flag spelled out: run flags live on the
// process-wide flag set, so a value would otherwise carry over from an earlier test.
func runArgs(input, out string, extra ...string) []string {
	return append([]string{"run", "--agent", support.Name, "--input", input, "--output_dir", out,
		"--restore=", "--keyring=", "--allow_unsigned_intents=false"}, extra...)
}

func writeEnvelopes(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "envelopes.jsonl")
	if err := os.WriteFile(p, support.Envelopes, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An input or restore glob that matches no file is an error, not an empty successful run.
func TestRunRefusesAGlobMatchingNoFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"input", runArgs(filepath.Join(dir, "missing", "*.jsonl"), out, "--allow_unsigned_intents"), "--input"},
		{"restore", runArgs(writeEnvelopes(t), out, "--restore", filepath.Join(dir, "none-*.jsonl"), "--allow_unsigned_intents"), "--restore"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "matches no file") {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Fatalf("the refused run wrote %s (%v)", out, err)
			}
		})
	}
}

// An agent that emits intents does not start without a keyring, and says why.
func TestRunRefusesUnsignedIntentsWithoutConsent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, errOut := runCLI(t, "", runArgs(writeEnvelopes(t), out)...)
	if code != 2 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	for _, want := range []string{"--keyring", "signing_failed", "--allow_unsigned_intents", "--verify require"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %s", want, errOut)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused run wrote %s (%v)", out, err)
	}
}

// With --keyring every intent is signed and verifies; with --allow_unsigned_intents instead
// the intents are emitted unsigned: a permissive (or off) verifier admits them, a requiring
// one refuses them. Either way no intent is dead-lettered.
func TestRunSignsOrAllowsUnsignedIntents(t *testing.T) {
	dir := t.TempDir()
	ringPath := filepath.Join(dir, "ring.json")
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	os.WriteFile(ringPath, []byte(`{"active":"k1","keys":[{"id":"k1","secret":"`+secret+`"}]}`), 0o600)
	kr, err := intent.LoadKeyring("file:" + ringPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		flag string
		want intent.Outcome
	}{
		{"keyring", "--keyring=file:" + ringPath, intent.OK},
		{"allow unsigned", "--allow_unsigned_intents", intent.Unsigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, errOut := runCLI(t, "", runArgs(writeEnvelopes(t), out, tc.flag)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
			}
			intents, err := readOutput(out, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
			if err != nil || len(intents) == 0 {
				t.Fatalf("%d intents, %v", len(intents), err)
			}
			for _, ti := range intents {
				if o := intent.Verify(ti, kr); o != tc.want {
					t.Errorf("intent %s verifies %s, want %s", ti.GetIntentId(), o, tc.want)
				}
				if tc.want == intent.Unsigned && (intent.ModePermissive.Check(ti, kr) != nil ||
					intent.ModeOff.Check(ti, kr) != nil || intent.ModeRequire.Check(ti, kr) == nil) {
					t.Errorf("intent %s: permissive and off must admit it, require refuse it", ti.GetIntentId())
				}
			}
			dead, err := readOutput(out, pipeline.DeadLettersName, func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} })
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dead {
				if d.GetReason() == "signing_failed" {
					t.Errorf("dead letter %s", d.GetReason())
				}
			}
		})
	}
}
