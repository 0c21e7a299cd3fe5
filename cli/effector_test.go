package cli

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// writeIntents writes signed support-agent intents as the pipeline does: lookups as JSON
// Lines, a refund approval and a refund call as length-delimited binary.
func writeIntents(t *testing.T, dir string) (ring string, lookupID string) {
	t.Helper()
	secret := bytes.Repeat([]byte{7}, 32)
	ring = filepath.Join(dir, "keyring.json")
	os.WriteFile(ring, []byte(fmt.Sprintf(`{"active":"k","keys":[{"id":"k","secret":%q}]}`, base64.StdEncoding.EncodeToString(secret))), 0o600)
	kr, err := intent.LoadKeyring("file:" + ring)
	if err != nil {
		t.Fatal(err)
	}
	far := int64(1) << 50
	mk := func(entity string, step uint32, tool, args string, kind pb.ToolIntent_Kind) *pb.ToolIntent {
		ti := &pb.ToolIntent{IntentId: intent.ID([]byte(entity), 0, step), EntityKey: []byte(entity), StepIndex: step,
			ToolName: tool, ArgsJson: args, ExpiresAtMs: far, Kind: kind}
		if err := intent.Sign(ti, kr); err != nil {
			t.Fatal(err)
		}
		return ti
	}
	lookup := mk("customer-2", 0, support.ToolLookupOrder, `{"support.lookup_order.order_id":"A-1001"}`, pb.ToolIntent_TOOL)
	forged := mk("customer-9", 0, support.ToolLookupOrder, `{"support.lookup_order.order_id":"A-1001"}`, pb.ToolIntent_TOOL)
	forged.ArgsJson = `{"support.lookup_order.order_id":"A-2002"}`
	var js []byte
	for _, ti := range []*pb.ToolIntent{lookup, forged} {
		b, _ := protojson.Marshal(ti)
		js = append(append(js, b...), '\n')
	}
	js = append(js, "not an intent\n"...)
	refundArgs := `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"arrived broken"}`
	var bin []byte
	for _, ti := range []*pb.ToolIntent{
		mk("customer-3", 0, support.ToolRefund, refundArgs, pb.ToolIntent_APPROVAL),
		mk("customer-3", 1, support.ToolRefund, refundArgs, pb.ToolIntent_TOOL),
	} {
		b, _ := proto.Marshal(ti)
		bin = binary.AppendUvarint(bin, uint64(len(b)))
		bin = append(bin, b...)
	}
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	os.WriteFile(filepath.Join(dir, "in", "intents.jsonl"), js, 0o644)
	os.WriteFile(filepath.Join(dir, "in", "intents.binpb"), bin, 0o644)
	return ring, lookup.GetIntentId()
}

// `beamagents effector` over intent files runs the example's tools once, refuses the forged
// intent, lists the approval, keeps the malformed line, and answers a second run from the
// dedup store without executing again. Without a console nobody can decide the approval, so
// each run writes its results and exits 1 saying so.
func TestEffectorFiles(t *testing.T) {
	dir := t.TempDir()
	ring, _ := writeIntents(t, dir)
	args := []string{"effector", "--input", filepath.Join(dir, "in", "intents.*"), "--output_dir", filepath.Join(dir, "out"),
		"--keyring", "file:" + ring, "--verify", "require", "--dedup", "bbolt:" + filepath.Join(dir, "dedup.db")}
	code, out, errOut := runCLI(t, "", args...)
	if code != 1 || !strings.Contains(errOut, "1 approval(s) nobody can decide here") {
		t.Fatalf("exit %d (want 1, the approval nobody can decide)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"executed                     2", "rejected                     1", "rejected_intent_bad_signature 1",
		"approvals                    1", "malformed                    1", "signature_ok                 3", "signature_bad_signature      1",
		"5 intents, 3 results and 0 decisions"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "intents.jsonl:3") {
		t.Errorf("the malformed line is not reported: %s", errOut)
	}
	results, err := os.ReadFile(filepath.Join(dir, "out", "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"status":"OK"`, `"status":"REJECTED"`, base64.StdEncoding.EncodeToString([]byte(`{"status":"shipped","eta":"Thursday"}`))} {
		if !strings.Contains(string(results), want) {
			t.Errorf("results lack %s:\n%s", want, results)
		}
	}
	executed := func() [][]byte {
		envs, err := readOutput(filepath.Join(dir, "out"), "results", func() *pb.AgentEnvelope { return &pb.AgentEnvelope{} })
		if err != nil {
			t.Fatal(err)
		}
		var out [][]byte
		for _, env := range envs {
			if env.GetToolResult().GetStatus() == pb.ToolResult_OK {
				b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(env)
				out = append(out, b)
			}
		}
		return out
	}
	first := executed()
	code, out, _ = runCLI(t, "", append(args, "--replace")...)
	if code != 1 || !strings.Contains(out, "deduplicated                 2") || !strings.Contains(out, "executed                     0") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	// Executed results come back from the store byte for byte; refusals before the store
	// (the forged intent) are decided again, at the new completion time.
	if second := executed(); len(first) != 2 || !bytes.Equal(bytes.Join(first, nil), bytes.Join(second, nil)) {
		t.Fatal("the second run's results differ from the first's")
	}
}

func TestEffectorFlags(t *testing.T) {
	dir := t.TempDir()
	ring, _ := writeIntents(t, dir)
	in := filepath.Join(dir, "in", "intents.*")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no mode", []string{}, 2, "usage"},
		{"both modes", []string{"--input", in, "--output_dir", dir, "--input_subscription", "projects/p/subscriptions/s", "--results_topic", "projects/p/topics/t"}, 2, "usage"},
		{"require without keyring", []string{"--input", in, "--output_dir", dir}, 2, "needs --keyring"},
		{"bad mode", []string{"--input", in, "--output_dir", dir, "--verify", "lenient"}, 2, "lenient"},
		{"bad dedup", []string{"--input", in, "--output_dir", dir, "--keyring", "file:" + ring, "--dedup", "memcached:x"}, 2, "memcached"},
		{"expiry without its bound", []string{"--input", in, "--output_dir", dir, "--keyring", "file:" + ring, "--expiry", "emission"}, 2, "--expiry: emission needs its bound"},
		{"unknown expiry", []string{"--input", in, "--output_dir", dir, "--keyring", "file:" + ring, "--expiry", "receipt"}, 2, `--expiry: "receipt" is not clock or emission:MAXLAG`},
		{"expiry bound too long", []string{"--input", in, "--output_dir", dir, "--keyring", "file:" + ring, "--expiry", "emission:9000h"}, 2, "--expiry: emission:MAXLAG needs MAXLAG above 0"},
		{"console without identity", []string{"--input", in, "--output_dir", dir, "--keyring", "file:" + ring, "--dedup", "bbolt:" + dir + "/d.db", "--console", "127.0.0.1:0"}, 2, "approver"},
		{"permissive", []string{"--input", in, "--output_dir", dir + "/p", "--keyring", "file:" + ring, "--verify", "permissive", "--dedup", "bbolt:" + dir + "/p.db"}, 1, "rejected_intent_bad_signature 1"},
		{"off", []string{"--input", in, "--output_dir", dir + "/o", "--verify", "off", "--dedup", "bbolt:" + dir + "/o.db"}, 1, "signature_off                4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"effector"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d (want %d), want %q in:\n%s\n%s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}

// With the default --dedup the store is a bbolt file under the user cache directory.
func TestEffectorDefaultStore(t *testing.T) {
	dir := t.TempDir()
	ring, _ := writeIntents(t, dir)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	t.Setenv("HOME", dir)
	code, out, errOut := runCLI(t, "", "effector", "--input", filepath.Join(dir, "in", "*.jsonl"), "--output_dir", filepath.Join(dir, "out"), "--keyring", "file:"+ring)
	if code != 0 {
		t.Fatalf("%s %s", out, errOut)
	}
	cache, _ := os.UserCacheDir()
	if _, err := os.Stat(filepath.Join(cache, "beamagents", "effector.db")); err != nil {
		t.Fatal(err)
	}
}

// With --console, a files run lists the approval, waits for the decision made in the console
// (basic auth from --approver_users) and writes it with the results.
func TestEffectorFilesConsole(t *testing.T) {
	dir := t.TempDir()
	ring, _ := writeIntents(t, dir)
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("# approvers\nops:pa55word\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	go approveThroughConsoleAs(t, "http://"+addr+"/", "ops", "pa55word", map[string]string{"customer-3": "approve"})
	code, out, errOut := runCLI(t, "", "effector", "--input", filepath.Join(dir, "in", "intents.*"), "--output_dir", filepath.Join(dir, "out"),
		"--keyring", "file:"+ring, "--dedup", "bbolt:"+filepath.Join(dir, "d.db"), "--console", addr, "--approver_users", "file:"+users,
		"--agents", "support", "--lease", "10s", "--tool_timeout", "5s", "--workers", "4")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "approval console on http://"+addr) || !strings.Contains(out, "3 results and 1 decisions") || !strings.Contains(out, "decisions                    1") {
		t.Fatalf("output:\n%s", out)
	}
	results, _ := os.ReadFile(filepath.Join(dir, "out", "results.jsonl"))
	if !strings.Contains(string(results), `"approver":"ops"`) || !strings.Contains(string(results), `"approved":true`) {
		t.Fatalf("the decision is not in the results:\n%s", results)
	}
	os.WriteFile(users, []byte("nocolon\n"), 0o600)
	if code, _, errOut := runCLI(t, "", "effector", "--input", filepath.Join(dir, "in", "intents.*"), "--output_dir", dir, "--keyring", "file:"+ring,
		"--dedup", "bbolt:"+filepath.Join(dir, "d2.db"), "--console", "127.0.0.1:0", "--approver_users", "file:"+users); code != 2 || !strings.Contains(errOut, "user:password") {
		t.Fatalf("bad users file: exit %d %s", code, errOut)
	}
}

// A program decides on the effector's approvals page through the JSON API with a bearer token
// from --api_tokens: `approve --to URL --token REF`, with a note; the decision carries the
// token's user and the note, signed. A request without a token is refused.
func TestEffectorFilesConsoleAPIToken(t *testing.T) {
	dir := t.TempDir()
	ring, _ := writeIntents(t, dir)
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("ops:pa55word\n"), 0o600)
	const token = "tok-3f9a1c7e5b2d4f608a1c"
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("deploy-bot:"+token+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "token"), []byte(token+"\n"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	base := "http://" + addr + "/"
	decided := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if resp, err := http.Get(base + "api/approvals"); err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					decided <- fmt.Sprintf("without a token: %d", resp.StatusCode)
					return
				}
				req, _ := http.NewRequest("GET", base+"api/approvals", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				r, err := http.DefaultClient.Do(req)
				if err == nil {
					var listed struct{ Approvals []console.APIApproval }
					json.NewDecoder(r.Body).Decode(&listed)
					r.Body.Close()
					if list := listed.Approvals; len(list) == 1 {
						code, out, errOut := runCLI(t, "", "approve", "--to", base, "--token", "file:"+filepath.Join(dir, "token"),
							"--intent", list[0].IntentID, "--reject", "--note", "Refunds over 40 EUR need a manager.")
						decided <- fmt.Sprintf("approve: exit %d %s %s", code, out, errOut)
						return
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		decided <- "the approval was never listed"
	}()
	code, out, errOut := runCLI(t, "", "effector", "--input", filepath.Join(dir, "in", "intents.*"), "--output_dir", filepath.Join(dir, "out"),
		"--keyring", "file:"+ring, "--dedup", "bbolt:"+filepath.Join(dir, "d.db"), "--console", addr, "--approver_users", "file:"+users,
		"--api_tokens", "file:"+tokens, "--agents", "support")
	if got := <-decided; !strings.HasPrefix(got, "approve: exit 0 rejected") {
		t.Fatalf("decision: %s", got)
	}
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	results, _ := os.ReadFile(filepath.Join(dir, "out", "results.jsonl"))
	if !strings.Contains(string(results), `"approver":"deploy-bot"`) || !strings.Contains(string(results), `"note":"Refunds over 40 EUR need a manager."`) {
		t.Fatalf("the decision is not in the results:\n%s", results)
	}
	for _, tc := range []struct {
		name, ref, want string
	}{
		{"pasted tokens", "deploy-bot:" + token, "did you paste the tokens themselves"},
		{"without --console", "file:" + tokens, "needs --console"},
	} {
		args := []string{"effector", "--input", filepath.Join(dir, "in", "intents.*"), "--output_dir", t.TempDir(), "--keyring", "file:" + ring,
			"--dedup", "bbolt:" + filepath.Join(t.TempDir(), "d.db"), "--api_tokens", tc.ref}
		if tc.name == "pasted tokens" {
			args = append(args, "--console", "127.0.0.1:0", "--approver_users", "file:"+users)
		}
		if code, _, errOut := runCLI(t, "", args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d %s", tc.name, code, errOut)
		}
	}
}
