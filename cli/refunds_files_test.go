package cli_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// A user's own agent (examples/refunds, its own module: an inline lookup, a side-effecting
// note, a refund behind an approval) through the files loop, on input 4 hours old, against an
// OpenAI-compatible server answering after 300 ms: run, effector (--expiry emission), approve,
// run --resume, repeated until no key waits. Every key ends with its reply; no run writes a
// dead letter (so no orphaned result and no timeout); no intent is emitted twice; each tool
// ran once per call and the inline lookup once per activation; the model was asked once per
// activation.
func TestRefundsThroughFiles(t *testing.T) {
	dir := t.TempDir()
	bin, srv, asked := refundsModule(t, dir)

	ledger := filepath.Join(dir, "ledger.txt")
	ring := filepath.Join(dir, "ring.json")
	os.WriteFile(ring, []byte(`{"active":"k1","keys":[{"id":"k1","secret":"`+base64.StdEncoding.EncodeToString([]byte("refunds-files-loop-secret-32byte"))+`"}]}`), 0o600)
	env := []string{"REFUNDS_LEDGER=" + ledger, "MODEL_KEY=sk-local"}
	model := []string{"--model", "openai", "--base_url", srv.BaseURL(), "--api_key", "env:MODEL_KEY", "--model_name", "local-model"}
	runCmd := func(allow int, args ...string) string {
		t.Helper()
		code, out, errOut := execBin(t, bin, env, args...)
		if code != 0 && code != allow {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return out
	}

	// Input 4 hours old: a refund approved, a refund declined, a question.
	t0 := time.Now().Add(-4 * time.Hour).UnixMilli()
	var in strings.Builder
	for i, ev := range []struct{ key, text string }{{"c1", "refund A-1"}, {"c2", "refund A-3"}, {"c3", "where is A-2"}} {
		b, _ := protojson.Marshal(&pb.AgentEnvelope{EntityKey: []byte(ev.key), EventTimeMs: t0 + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(ev.text)}})
		in.Write(append(b, '\n'))
	}
	input := filepath.Join(dir, "in.jsonl")
	os.WriteFile(input, []byte(in.String()), 0o644)

	seen := map[string]bool{}
	finals := map[string]string{}
	prev := ""
	for round := 1; ; round++ {
		if round > 6 {
			t.Fatal("keys still waiting after 6 rounds")
		}
		out := filepath.Join(dir, fmt.Sprintf("out%d", round))
		args := append([]string{"run", "--agent", "refunds", "--input", input, "--output_dir", out, "--keyring", "file:" + ring}, model...)
		if prev != "" {
			args = append(args, "--resume", prev)
		}
		runCmd(0, args...)
		parked := map[string]int{}
		for _, sn := range readTyped(t, out, "snapshots", func() *pb.StateSnapshot { return &pb.StateSnapshot{} }) {
			if parked[string(sn.GetEntityKey())]++; parked[string(sn.GetEntityKey())] > 1 {
				t.Fatalf("round %d parked %s twice", round, sn.GetEntityKey())
			}
		}
		if dl := readTyped(t, out, "dead_letters", func() *pb.ActivationErrorRecord { return &pb.ActivationErrorRecord{} }); len(dl) > 0 {
			t.Fatalf("round %d dead letters: %v", round, dl)
		}
		for _, f := range readTyped(t, out, "finals", func() *pb.FinalReply { return &pb.FinalReply{} }) {
			finals[string(f.GetEntityKey())] = f.GetMessage()
		}
		intents := readTyped(t, out, "intents", func() *pb.ToolIntent { return &pb.ToolIntent{} })
		if len(intents) == 0 {
			break
		}
		for _, ti := range intents {
			if seen[ti.GetIntentId()] || ti.GetAttempt() != 0 {
				t.Fatalf("round %d emitted intent %s again (attempt %d)", round, ti.GetIntentId(), ti.GetAttempt())
			}
			seen[ti.GetIntentId()] = true
		}
		// The effector runs the tools; approvals wait for a person (exit 1), who decides them
		// with approve.
		results := filepath.Join(dir, fmt.Sprintf("eff%d", round))
		runCmd(1, "effector", "--input", filepath.Join(out, "intents.jsonl"), "--output_dir", results, "--keyring", "file:"+ring,
			"--dedup", "bbolt:"+filepath.Join(dir, "effector.db"), "--expiry", "emission:24h")
		answers, _ := os.ReadFile(filepath.Join(results, "results.jsonl"))
		for _, ti := range intents {
			if ti.GetKind() != pb.ToolIntent_APPROVAL {
				continue
			}
			decide := []string{"approve", "--intents", filepath.Join(out, "intents.jsonl"), "--intent", ti.GetIntentId(),
				"--approver", "ops@example.com", "--keyring", "file:" + ring}
			if string(ti.GetEntityKey()) == "c2" {
				decide = append(decide, "--reject", "--note", "A-3 was delivered intact.")
			}
			answers = append(answers, runCmd(0, decide...)...)
		}
		input = filepath.Join(dir, fmt.Sprintf("answers%d.jsonl", round))
		os.WriteFile(input, answers, 0o644)
		prev = out
	}

	want := map[string]string{"c1": "refund of A-1 issued: ", "c2": "the refund of A-3 was declined", "c3": "noted for A-2: "}
	for k, prefix := range want {
		if !strings.HasPrefix(finals[k], prefix) {
			t.Errorf("%s's reply %q, want %q…", k, finals[k], prefix)
		}
	}
	lines, _ := os.ReadFile(ledger)
	count := func(prefix string) int {
		return strings.Count(string(lines), "\n"+prefix) + map[bool]int{true: 1}[strings.HasPrefix(string(lines), prefix)]
	}
	if n := count("inline "); n != 3 {
		t.Errorf("the inline lookup ran %d times, want 3 (once per activation):\n%s", n, lines)
	}
	if notes, refunds := count("tool tickets.note"), count("tool payments.refund"); notes != 3 || refunds != 1 {
		t.Errorf("tickets.note ran %d times, payments.refund %d; want 3 and 1:\n%s", notes, refunds, lines)
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("the model was asked %d times, want 3 (once per activation)", n)
	}
}
