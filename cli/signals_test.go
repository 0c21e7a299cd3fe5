package cli_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// A user's own agent (examples/refunds) under `dev`, against a model server answering after
// 300 ms: a return waits for the carrier's signal, sent with `send --signal` (through the
// state directory) and through the JSON API, whose duplicate (same id) is dropped; a signal
// no activation awaits is a signal_unawaited dead letter; an approver edits the refund's
// order with `approve --args`, and the refund runs with the edited arguments. Offline, `send
// --signal --keyring --output` writes a signed signal envelope that verifies.
func TestSignalsAndEditedApprovalsOnAUsersAgent(t *testing.T) {
	dir := t.TempDir()
	user, srv, _ := refundsModule(t, dir)
	stateDir := filepath.Join(dir, "state")
	env := []string{"REFUNDS_LEDGER=" + filepath.Join(dir, "ledger.txt"), "MODEL_KEY=sk-local"}
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := execBin(t, user, env, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return out
	}
	dev := startDev(t, user, stateDir, env, "--agent", "refunds", "--listen", "127.0.0.1:0", "--model", "openai",
		"--base_url", srv.BaseURL(), "--api_key", "env:MODEL_KEY", "--model_name", "local-model")

	for k, body := range map[string]string{"r0": "return A-5", "r1": "return A-6", "k0": "refund A-1"} {
		if code, out := dev.api(t, "POST", "/api/events", map[string]string{"key": k, "body": body}); code != 202 {
			t.Fatalf("POST /api/events: %d %v", code, out)
		}
	}
	awaiting := regexp.MustCompile(`activation   (r\d)\s+seq 0  \S+ → suspended .*waits on SIGNAL carrier`)
	waitFor(t, dev, func(out string) bool { return len(awaiting.FindAllString(out, -1)) == 2 })

	run("send", "--state_dir", stateDir, "--key", "r0", "--signal", "carrier", "scanned", "at", "the", "depot")
	sig := map[string]string{"key": "r1", "name": "carrier", "id": "scan-77", "payload": "scanned in Lyon"}
	for i := 0; i < 2; i++ {
		if code, out := dev.api(t, "POST", "/api/signals", sig); code != 202 || out["id"] != "scan-77" {
			t.Fatalf("POST /api/signals: %d %v", code, out)
		}
	}
	if out := run("send", "--state_dir", stateDir, "--key", "nobody", "--signal", "carrier", "late"); !strings.Contains(out, "sent signal carrier") {
		t.Fatalf("send --signal printed %q", out)
	}

	ids := dev.pending(t, "k0")
	edited := `{"payments.refund.args.key":"k0","payments.refund.args.order_id":"A-9"}`
	run("approve", "--state_dir", stateDir, "--intent", ids["k0"], "--args", edited)

	finals := regexp.MustCompile(`(?m)^final reply  ([rk]\d)\s+(.*)$`)
	waitFor(t, dev, func(out string) bool {
		return len(finals.FindAllString(out, -1)) >= 3 && strings.Contains(out, "signal_unawaited")
	})
	time.Sleep(2 * time.Second) // the duplicate, were it not dropped, would show by now
	dev.stop(t)
	all := dev.stdout.String()
	replies := map[string][]string{}
	for _, m := range finals.FindAllStringSubmatch(all, -1) {
		replies[m[1]] = append(replies[m[1]], m[2])
	}
	want := map[string]string{"r0": "return of A-5 scanned: scanned at the depot", "r1": "return of A-6 scanned: scanned in Lyon", "k0": `"order_id":"A-9"`}
	for k, w := range want {
		if len(replies[k]) != 1 || !strings.Contains(replies[k][0], w) {
			t.Errorf("%s: replies %q, want one with %q", k, replies[k], w)
		}
	}
	if n := strings.Count(all, "dead letter"); n != 1 || !strings.Contains(all, "signal_unawaited") {
		t.Errorf("%d dead letters, want the one signal_unawaited:\n%s", n, all)
	}

	// Offline: a signed signal envelope for the next run's input.
	ring := filepath.Join(dir, "ring.json")
	secret := []byte("sixteen-bytes-secret-for-a-test!")
	os.WriteFile(ring, []byte(`{"active":"ops","keys":[{"id":"ops","secret":"`+base64.StdEncoding.EncodeToString(secret)+`"}]}`), 0o600)
	kr, err := intent.NewKeyring("ops", map[string][]byte{"ops": secret})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "signals.jsonl")
	run("send", "--key", "r2", "--signal", "carrier", "--signal_id", "s-1", "--keyring", "file:"+ring, "--event_time_ms", "1767225600000", "--output", out, "scanned")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := &pb.AgentEnvelope{}
	if err := protojson.Unmarshal(b, got); err != nil {
		t.Fatal(err)
	}
	s := got.GetSignal()
	if string(got.GetEntityKey()) != "r2" || got.GetEventTimeMs() != 1767225600000 || s.GetSignalId() != "s-1" || string(s.GetPayload()) != "scanned" {
		t.Fatalf("envelope %v", got)
	}
	if o := intent.VerifySignal(s, kr); o != intent.OK {
		t.Fatalf("the written signal verifies as %v", o)
	}
	if !strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte("r2"))) {
		t.Fatalf("the envelope's key: %s", b)
	}
}

// waitFor waits until dev's terminal output satisfies ok, failing on a timeout.
func waitFor(t *testing.T, dev *devProc, ok func(string) bool) {
	t.Helper()
	for deadline := time.Now().Add(4 * time.Minute); !ok(dev.stdout.String()); time.Sleep(250 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out:\n%s\n%s", dev.stdout, dev.stderr)
		}
	}
}
