package cli

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// Replaying the demo's recorded traffic with the unchanged agent makes no model call and
// writes the recorded files byte for byte; with a changed prompt every key's first divergence
// is reported.
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	opts, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Every key exports its state after its traffic, so the recorded caches hold every answer.
	var exports strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&exports, `{"entityKey":%q,"eventTimeMs":"1767229000000","exportRequest":{"requestId":"after"}}`+"\n",
			b64(fmt.Sprintf("customer-%d", i)))
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(opts.Input), "exports.jsonl"), []byte(exports.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(filepath.Dir(opts.Input), "*.jsonl")
	recorded := filepath.Join(dir, "recorded")
	code, out, errOut := runCLI(t, "", "run", "--agent", support.Name, "--input", input, "--keyring", opts.Keyring,
		"--output_dir", recorded, "--restore", "", "--mode", "streaming", "--agent_config", "")
	if code != 0 {
		t.Fatalf("recorded run: exit %d\n%s\n%s", code, out, errOut)
	}
	cache := filepath.Join(recorded, "snapshots.binpb")

	replayed := filepath.Join(dir, "replayed")
	code, out, errOut = runCLI(t, "", "replay", "--agent", support.Name, "--keyring", opts.Keyring, "--cache_from", cache,
		"--input", input, "--output_dir", replayed, "--recorded", recorded)
	if code != 0 || !strings.Contains(out, "0 cache misses, 0 provider calls; 0 keys diverged") {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log(strings.TrimSpace(out))
	for _, name := range []string{"intents", "traces", "finals", "snapshots", "dead_letters"} {
		for _, ext := range []string{".binpb", ".jsonl"} {
			want, _ := os.ReadFile(filepath.Join(recorded, name+ext))
			got, err := os.ReadFile(filepath.Join(replayed, name+ext))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("replayed %s%s differs from the recorded file (%v)", name, ext, err)
			}
		}
	}

	script := filepath.Join(dir, "script.jsonl")
	os.WriteFile(script, support.ModelScript, 0o644)
	changed := filepath.Join(dir, "changed.json")
	os.WriteFile(changed, []byte(fmt.Sprintf(`{"script":%q,"prompt":"You are a terse support agent."}`, script)), 0o644)
	code, out, errOut = runCLI(t, "", "replay", "--agent", flakyAgent, "--agent_config", changed, "--keyring", opts.Keyring,
		"--cache_from", cache, "--input", input, "--output_dir", filepath.Join(dir, "changed"))
	if code != exitDiverged || !strings.Contains(out, `key "customer-1": cache miss at seq 0 step 0 (no cache entry`) {
		t.Fatalf("changed prompt: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log(strings.TrimSpace(out))

	// From restored state: the exports alone, on top of the recorded snapshots, export them again.
	restored := filepath.Join(dir, "restored")
	code, out, errOut = runCLI(t, "", "replay", "--agent", support.Name, "--keyring", opts.Keyring, "--cache_from", cache,
		"--input", filepath.Join(filepath.Dir(opts.Input), "exports.jsonl"), "--restore", cache, "--output_dir", restored)
	if code != exitDiverged {
		t.Fatalf("restored replay: exit %d\n%s\n%s", code, out, errOut)
	}
	snaps, err := records.ReadMessages([]string{filepath.Join(restored, "snapshots.binpb")}, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	recordedSnaps, _ := records.ReadMessages([]string{cache}, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if err != nil || len(snaps) != 5 || len(recordedSnaps) != 6 {
		t.Fatalf("%d restored snapshots (%v), %d recorded", len(snaps), err, len(recordedSnaps))
	}
	for _, sn := range snaps {
		for _, r := range recordedSnaps {
			if r.GetRequestId() == "after" && bytes.Equal(r.GetEntityKey(), sn.GetEntityKey()) && !proto.Equal(r, sn) {
				t.Errorf("%s: the restored state exports differently", sn.GetEntityKey())
			}
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
