package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// A run under --keyring verifies results and approvals (require), so the demo's traffic with
// its answers unsigned dead-letters them as refused; its replay applies the same verification
// by default and reproduces the run, and a replay told otherwise (--verify_results off)
// admits them and diverges.
func TestReplayVerifiesAsTheRun(t *testing.T) {
	dir := t.TempDir()
	opts, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := unsignAnswers(t, opts.Input)
	var exports strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&exports, `{"entityKey":%q,"eventTimeMs":"1767229000000","exportRequest":{"requestId":"after"}}`+"\n",
			b64(fmt.Sprintf("customer-%d", i)))
	}
	if err := os.WriteFile(opts.Input, append(unsigned, exports.String()...), 0o644); err != nil {
		t.Fatal(err)
	}
	recorded := filepath.Join(dir, "recorded")
	code, out, errOut := runCLI(t, "", "run", "--agent", support.Name, "--input", opts.Input, "--keyring", opts.Keyring,
		"--output_dir", recorded, "--mode", "streaming")
	dead, _ := os.ReadFile(filepath.Join(recorded, "dead_letters.jsonl"))
	if code != 0 || !bytes.Contains(dead, []byte("result_refused")) || !bytes.Contains(dead, []byte("approval_refused")) {
		t.Fatalf("recorded run: exit %d, dead letters:\n%s\n%s\n%s", code, dead, out, errOut)
	}
	cache := filepath.Join(recorded, "snapshots.binpb")
	replay := func(name string, extra ...string) (int, string, string) {
		args := append([]string{"replay", "--agent", support.Name, "--keyring", opts.Keyring, "--cache_from", cache,
			"--input", opts.Input, "--output_dir", filepath.Join(dir, name), "--recorded", recorded}, extra...)
		return runCLI(t, "", args...)
	}
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"default", nil}, {"require", []string{"--verify_results", "require"}}} {
		if code, out, errOut := replay(tc.name, tc.extra...); code != 0 || !strings.Contains(out, "0 cache misses, 0 provider calls; 0 keys diverged") {
			t.Fatalf("replay (%s): exit %d\n%s\n%s", tc.name, code, out, errOut)
		}
	}
	if code, out, errOut := replay("off", "--verify_results", "off"); code != exitDiverged {
		t.Fatalf("replay admitting what the run refused: exit %d, want %d\n%s\n%s", code, exitDiverged, out, errOut)
	}
	if code, _, errOut := runCLI(t, "", "replay", "--agent", support.Name, "--cache_from", cache, "--input", opts.Input,
		"--output_dir", filepath.Join(dir, "nokey"), "--verify_results", "require"); code != 2 || !strings.Contains(errOut, "needs --keyring") {
		t.Fatalf("--verify_results require without --keyring: exit %d\n%s", code, errOut)
	}
}

// unsignAnswers returns the envelope file's lines with every tool result's and approval's
// signature removed, as an unverified source would send them.
func unsignAnswers(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		env := &pb.AgentEnvelope{}
		if err := protojson.Unmarshal(line, env); err != nil {
			out = append(append(out, line...), '\n') // the demo's deliberately broken line stays
			continue
		}
		if r := env.GetToolResult(); r != nil {
			r.SignatureScheme, r.SigningKeyId, r.Signature, r.IntentDigest = 0, "", nil, nil
		}
		if ap := env.GetApproval(); ap != nil {
			ap.SignatureScheme, ap.SigningKeyId, ap.Signature = 0, "", nil
		}
		j, err := protojson.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		out = append(append(out, j...), '\n')
	}
	return out
}
