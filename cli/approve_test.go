package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// The files loop with a person deciding: a run suspends on an APPROVAL intent and parks the
// key at the end of its input, approve writes the signed decision, and the next run, resuming
// the parked key, takes it and emits the gated call. A decision signed with another keyring is
// refused.
func TestApproveResumesTheNextRun(t *testing.T) {
	dir := t.TempDir()
	opts, _, err := prepareDemo(dir)
	if err != nil {
		t.Fatal(err)
	}
	const refund = "535c5ac5-6a1f-5826-b164-dc80e11a6c8a" // customer-3's APPROVAL intent
	in1 := filepath.Join(dir, "in1.jsonl")
	write(t, in1, `{"entityKey":"Y3VzdG9tZXItMw==","eventTimeMs":"1767225602000","externalEvent":"T3JkZXIgQS0yMDAyIGFycml2ZWQgYnJva2VuLCBwbGVhc2UgcmVmdW5kIGl0Lg=="}`)
	out1 := filepath.Join(dir, "out1")
	if code, out, errOut := runCLI(t, "", "run", "--agent", support.Name, "--input", in1, "--keyring", opts.Keyring, "--output_dir", out1); code != 0 {
		t.Fatalf("run 1: exit %d\n%s\n%s", code, out, errOut)
	}

	decided := filepath.Join(dir, "in2.jsonl")
	code, out, errOut := runCLI(t, "", "approve", "--intents", filepath.Join(out1, "intents.jsonl"), "--intent", refund,
		"--approver", "ops@example.com", "--keyring", opts.Keyring, "--output", decided)
	if code != 0 || out != "" {
		t.Fatalf("approve: exit %d\n%s\n%s", code, out, errOut)
	}
	appendLines(t, decided, `{"entityKey":"Y3VzdG9tZXItMw==","eventTimeMs":"1767225700000","exportRequest":{"requestId":"after"}}`)
	out2 := filepath.Join(dir, "out2")
	if code, out, errOut := runCLI(t, "", "run", "--agent", support.Name, "--input", decided, "--resume", out1,
		"--keyring", opts.Keyring, "--output_dir", out2); code != 0 {
		t.Fatalf("run 2: exit %d\n%s\n%s", code, out, errOut)
	}
	intents, _ := os.ReadFile(filepath.Join(out2, "intents.jsonl"))
	dead, _ := os.ReadFile(filepath.Join(out2, "dead_letters.jsonl"))
	// The gated call is emitted; the approval was admitted, and the key, waiting on the call,
	// is parked again: no dead letter at all.
	if len(bytes.TrimSpace(dead)) != 0 || !bytes.Contains(intents, []byte(`"kind":"TOOL"`)) || !bytes.Contains(intents, []byte(`"toolName":"payments.refund"`)) {
		t.Fatalf("run 2 after the approval: intents\n%s\ndead letters\n%s", intents, dead)
	}

	// A rejection is signed and bound the same way; a decision under another keyring is refused.
	code, out, errOut = runCLI(t, "", "approve", "--intents", filepath.Join(out1, "intents.jsonl"), "--intent", refund,
		"--approver", "ops@example.com", "--keyring", opts.Keyring, "--reject", "--event_time_ms", "1767225700000")
	env := &pb.AgentEnvelope{}
	if code != 0 || protojson.Unmarshal([]byte(out), env) != nil || env.GetApproval().GetApproved() ||
		env.GetEventTimeMs() != 1767225700000 || env.GetApproval().GetDecidedAtMs() != 1767225700000 || len(env.GetApproval().GetSignature()) == 0 {
		t.Fatalf("approve --reject: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Setenv("OTHER_RING", `{"active":"x","keys":[{"id":"x","secret":"YW5vdGhlci1zaXh0ZWVuLWJ5dGVzLW9mLXNlY3JldCE="}]}`)
	forged := filepath.Join(dir, "forged.jsonl")
	if code, _, errOut := runCLI(t, "", "approve", "--intents", filepath.Join(out1, "intents.jsonl"), "--intent", refund,
		"--approver", "mallory", "--keyring", "env:OTHER_RING", "--output", forged); code != 0 {
		t.Fatalf("approve with another keyring: exit %d\n%s", code, errOut)
	}
	out3 := filepath.Join(dir, "out3")
	runCLI(t, "", "run", "--agent", support.Name, "--input", forged, "--resume", out1,
		"--keyring", opts.Keyring, "--output_dir", out3)
	dead, _ = os.ReadFile(filepath.Join(out3, "dead_letters.jsonl"))
	if !bytes.Contains(dead, []byte("approval_refused")) {
		t.Fatalf("a decision signed with another keyring: dead letters\n%s", dead)
	}

	// Refusals: an unknown intent, and a TOOL intent, whose answer is the effector's.
	for _, id := range []string{"no-such-intent", "13008296-0dde-55e2-b844-3397c92fd0db"} {
		if code, _, errOut := runCLI(t, "", "approve", "--intents", filepath.Join(out1, "intents.jsonl"), "--intent", id,
			"--approver", "ops", "--keyring", opts.Keyring); code != 1 || !strings.Contains(errOut, id) {
			t.Errorf("approve --intent %s: exit %d\n%s", id, code, errOut)
		}
	}
}

func write(t *testing.T, path string, lines ...string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}
