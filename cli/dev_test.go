package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
)

// devProc is a running `dev` of a built binary.
type devProc struct {
	cmd            *exec.Cmd
	stdout, stderr *testsvc.SyncBuffer
	url, token     string
	done           chan error
}

// startDev starts bin dev with args and waits until its server.json names its console.
func startDev(t testing.TB, bin, stateDir string, env []string, args ...string) *devProc {
	t.Helper()
	os.Remove(filepath.Join(stateDir, "server.json"))
	p := &devProc{stdout: &testsvc.SyncBuffer{}, stderr: &testsvc.SyncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append([]string{"dev", "--state_dir", stateDir}, args...)...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-p.done:
			t.Fatalf("dev exited at start: %v\n%s\n%s", err, p.stdout, p.stderr)
		default:
		}
		b, err := os.ReadFile(filepath.Join(stateDir, "server.json"))
		if err != nil {
			continue
		}
		var s struct{ URL, Token string }
		if json.Unmarshal(b, &s) == nil && s.URL != "" {
			p.url, p.token = s.URL, s.Token
			return p
		}
	}
	t.Fatalf("dev never served\n%s\n%s", p.stdout, p.stderr)
	return nil
}

// stop interrupts dev (Ctrl-C) and waits for it to exit 0.
func (p *devProc) stop(t testing.TB) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("dev: %v\n%s\n%s", err, p.stdout, p.stderr)
		}
	case <-time.After(4 * time.Minute):
		p.cmd.Process.Kill()
		t.Fatalf("dev did not stop\n%s\n%s", p.stdout, p.stderr)
	}
}

// api calls dev's JSON API with its token.
func (p *devProc) api(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.url+strings.TrimPrefix(path, "/"), rd)
	req.Header.Set("Authorization", "Bearer "+p.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// pending waits until the approvals of every key of keys are listed pending, and returns
// their intent ids by key.
func (p *devProc) pending(t *testing.T, keys ...string) map[string]string {
	t.Helper()
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if strings.Contains(p.stdout.String(), "dead letter") {
			t.Fatalf("a dead letter while waiting for approvals:\n%s\n%s", p.stdout, p.stderr)
		}
		code, out := p.api(t, "GET", "/api/approvals", nil)
		if code != 200 {
			t.Fatalf("GET /api/approvals: %d %v", code, out)
		}
		ids := map[string]string{}
		list, _ := out["approvals"].([]any)
		for _, a := range list {
			m := a.(map[string]any)
			if m["state"] == "pending" {
				ids[m["entity_key"].(string)] = m["intent_id"].(string)
			}
		}
		all := true
		for _, k := range keys {
			all = all && ids[k] != ""
		}
		if all {
			return ids
		}
	}
	t.Fatalf("approvals of %v never all pending\n%s\n%s", keys, p.stdout, p.stderr)
	return nil
}

// A user's own agent in its own module (examples/refunds: a handler with an inline lookup,
// a side-effecting tool and a refund behind an approval) runs under `dev` against an
// OpenAI-compatible server on loopback answering after 300 ms. Twenty events for ten keys
// arrive through the JSON API, `send` (--state_dir, and --to with --token, text and --file)
// and --follow; approvals are decided through the JSON API and `approve` (--state_dir, and
// --to with --token), approving some and rejecting others; dev is stopped (Ctrl-C) and
// started again with approvals still pending. Every key ends with its two final replies,
// each tool intent ran exactly once, the inline lookup ran once per activation, the model
// was asked once per activation (none again after the restart), and no dead letter was
// written.
func TestDevLoopOnAUsersAgent(t *testing.T) {
	dir := t.TempDir()
	user, srv, asked := refundsModule(t, dir)

	ledger := filepath.Join(dir, "ledger.txt")
	follow := filepath.Join(dir, "events.jsonl")
	stateDir := filepath.Join(dir, "state")
	tokenFile := filepath.Join(dir, "token")
	env := []string{"REFUNDS_LEDGER=" + ledger, "MODEL_KEY=sk-local"}
	args := []string{"--agent", "refunds", "--listen", "127.0.0.1:0", "--model", "openai", "--base_url", srv.BaseURL(),
		"--api_key", "env:MODEL_KEY", "--model_name", "local-model", "--follow", follow}
	run := func(args ...string) string {
		t.Helper()
		code, out, errOut := execBin(t, user, env, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		return out
	}
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}

	// Run 1: every key asks for a refund.
	dev := startDev(t, user, stateDir, env, args...)
	os.WriteFile(tokenFile, []byte(dev.token), 0o600)
	for _, k := range keys[:4] {
		if code, out := dev.api(t, "POST", "/api/events", map[string]string{"key": k, "body": "refund A-1"}); code != 202 {
			t.Fatalf("POST /api/events: %d %v", code, out)
		}
	}
	for _, k := range keys[4:7] {
		run("send", "--state_dir", stateDir, "--key", k, "refund", "A-2")
	}
	bodyFile := filepath.Join(dir, "body.txt")
	os.WriteFile(bodyFile, []byte("refund A-3"), 0o644)
	run("send", "--to", dev.url, "--token", "file:"+tokenFile, "--key", keys[7], "--file", bodyFile)
	os.WriteFile(follow, []byte(`{"key":"k8","body":"refund A-1"}`+"\n"+`{"key":"k9","body":"refund A-2"}`+"\n"), 0o644)

	ids := dev.pending(t, keys...)
	decide := func(p *devProc, k, decision string) {
		if code, out := p.api(t, "POST", "/api/approvals/decide", map[string]string{"intent_id": ids[k], "decision": decision}); code != 200 {
			t.Fatalf("decide %s: %d %v", k, code, out)
		}
	}
	decide(dev, "k0", "approve")
	decide(dev, "k1", "reject")
	run("approve", "--state_dir", stateDir, "--intent", ids["k2"])
	run("approve", "--to", dev.url, "--token", "file:"+tokenFile, "--intent", ids["k3"], "--reject")
	// A second decision on the same approval is refused with its stable code.
	if code, out, errOut := execBin(t, user, env, "approve", "--state_dir", stateDir, "--intent", ids["k3"]); code != 1 || !strings.Contains(errOut, "approval_decided") {
		t.Fatalf("a second decision: exit %d\n%s\n%s", code, out, errOut)
	}

	// Restart in the middle: six approvals pending, two keys resuming.
	dev.stop(t)
	out1 := dev.stdout.String()
	if !regexp.MustCompile(`state of \d+ keys and \d+ envelopes written to`).MatchString(out1) {
		t.Fatalf("the first run wrote no state:\n%s\n%s", out1, dev.stderr)
	}
	dev = startDev(t, user, stateDir, env, args...)
	os.WriteFile(tokenFile, []byte(dev.token), 0o600)
	ids = dev.pending(t, keys[4:]...)
	if errOut := dev.stderr.String(); !strings.Contains(errOut, "restoring 10 keys") || !strings.Contains(errOut, "pending intents of restored keys sent to the effector again") {
		t.Fatalf("the restart restored nothing:\n%s", errOut)
	}
	decide(dev, "k4", "approve")
	decide(dev, "k5", "reject")
	run("approve", "--state_dir", stateDir, "--intent", ids["k6"])
	run("approve", "--state_dir", stateDir, "--intent", ids["k7"], "--reject")
	run("approve", "--to", dev.url, "--token", "file:"+tokenFile, "--intent", ids["k8"])
	decide(dev, "k9", "reject")

	// Round 2: a question per key, no approval.
	for i, k := range keys {
		switch {
		case i < 4:
			if code, out := dev.api(t, "POST", "/api/events", map[string]string{"key": k, "body": "where is A-3"}); code != 202 {
				t.Fatalf("POST /api/events: %d %v", code, out)
			}
		case i < 8:
			run("send", "--state_dir", stateDir, "--key", k, "where", "is", "A-3")
		default:
			f, _ := os.OpenFile(follow, os.O_APPEND|os.O_WRONLY, 0)
			fmt.Fprintf(f, `{"key":%q,"body":"where is A-3"}`+"\n", k)
			f.Close()
		}
	}
	finals := regexp.MustCompile(`(?m)^final reply  (k\d)\s+(.*)$`)
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		if n := len(finals.FindAllString(out1+dev.stdout.String(), -1)); n >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not every key answered twice:\n%s\n%s\n%s", out1, dev.stdout, dev.stderr)
		}
	}
	dev.stop(t)
	all := out1 + dev.stdout.String()
	t.Log(all)

	replies := map[string][]string{}
	for _, m := range finals.FindAllStringSubmatch(all, -1) {
		replies[m[1]] = append(replies[m[1]], m[2])
	}
	approved := map[string]bool{"k0": true, "k2": true, "k4": true, "k6": true, "k8": true}
	for _, k := range keys {
		r := replies[k]
		if len(r) != 2 {
			t.Errorf("%s: %d final replies, want 2: %q", k, len(r), r)
			continue
		}
		want := "was declined"
		if approved[k] {
			want = "issued"
		}
		if !strings.Contains(r[0], want) || !strings.Contains(r[1], "noted for A-3") {
			t.Errorf("%s: replies %q, want the refund %s then the note", k, r, want)
		}
	}
	if strings.Contains(all, "dead letter") {
		t.Errorf("a dead letter was written:\n%s", all)
	}
	if !strings.Contains(all, "waits on APPROVAL payments.refund") || !regexp.MustCompile(`activation   k\d\s+seq \d  external_event → suspended  model calls 1  waits on TOOL tickets.note`).MatchString(all) {
		t.Errorf("the terminal shows no activation lines with what they wait on:\n%s", all)
	}

	b, err := os.ReadFile(ledger)
	if err != nil {
		t.Fatal(err)
	}
	inline, notes, refunds := map[string]int{}, 0, map[string]bool{}
	ran := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		switch {
		case f[0] == "inline":
			inline[f[1]]++
		case f[1] == "tickets.note":
			notes++
			ran[f[2]]++
		case f[1] == "payments.refund":
			refunds[f[3]] = true
			ran[f[2]]++
		}
	}
	for id, n := range ran {
		if n != 1 {
			t.Errorf("tool intent %s ran %d times", id, n)
		}
	}
	if notes != 20 || len(refunds) != 5 || len(ran) != 25 {
		t.Errorf("tickets.note ran %d times (want 20), payments.refund for %v (want the 5 approved keys), %d intents", notes, refunds, len(ran))
	}
	for k := range refunds {
		if !approved[k] {
			t.Errorf("a refund ran for %s, which was rejected", k)
		}
	}
	for _, k := range keys {
		if inline[k] != 2 {
			t.Errorf("the inline lookup ran %d times for %s, want once per activation (2)", inline[k], k)
		}
	}
	if n := asked.Load(); n != 20 {
		t.Errorf("the model was asked %d times, want once per activation (20)", n)
	}
}

// refundsModule builds examples/refunds, a user's agent in its own module, into dir, and
// starts the OpenAI-compatible server it is run against: every request answered after 300 ms
// with a summary, counted in asked. The test fails if the server refused a request.
func refundsModule(t *testing.T, dir string) (bin string, srv *llmtest.Server, asked *atomic.Int64) {
	t.Helper()
	bin = filepath.Join(dir, "refunds")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "examples", "refunds")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the user's module: %v\n%s", err, out)
	}
	asked = &atomic.Int64{}
	srv = llmtest.New(llmtest.OpenAI, func(int, []byte) llmtest.Reply {
		asked.Add(1)
		return llmtest.Reply{Text: `{"fields":{"refunds.summary.text":"The customer writes about the order."}}`, InputTokens: 50, OutputTokens: 10}
	})
	srv.Delay = 300 * time.Millisecond
	t.Cleanup(func() {
		srv.Close()
		if r := srv.Refusals(); len(r) > 0 {
			t.Errorf("the model server refused requests: %v", r)
		}
	})
	return bin, srv, asked
}

// execBin runs a built binary with args and extra environment.
func execBin(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), stdout.String(), stderr.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

// dev, send and approve refuse at launch (exit 2) what cannot work, with the real binary;
// send and approve with no dev server running say so (exit 1).
func TestDevRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dev"}, 2, "--agent: required"},
		{[]string{"dev", "--agent", "nosuch"}, 2, `unknown agent "nosuch"`},
		{[]string{"dev", "--agent", "support", "--listen", "0.0.0.0:0"}, 2, "--listen: dev serves on loopback only"},
		{[]string{"dev", "--agent", "support", "--keyring", "file:" + filepath.Join(dir, "missing.json")}, 2, "--keyring"},
		{[]string{"dev", "--agent", "support", "--verify_results", "sometimes"}, 2, "--verify_results"},
		{[]string{"dev", "--agent", "support", "--agent_config", filepath.Join(dir, "missing.json")}, 2, "--agent_config"},
		{[]string{"dev", "--agent", "support", "--model", "openai", "--base_url", "http://127.0.0.1:0/v1"}, 2, "--base_url"},
		{[]string{"dev", "--agent", "support", "--follow", dir}, 2, "--follow"},
		{[]string{"dev", "--agent", "support", "--memory_store", "memory"}, 2, "--memory_store: "},
		{[]string{"send", "--key", "k"}, 2, "no event"},
		{[]string{"send", "--key", "k", "--to", "http://127.0.0.1:1/", "hi"}, 2, "--token: required with --to"},
		{[]string{"send", "--key", "k", "--to", "http://127.0.0.1:1/", "--token", "sk-pasted", "hi"}, 2, "--token: the value is not env:VAR or file:PATH"},
		{[]string{"send", "--key", "k", "hi"}, 2, "--state_dir: required: this binary registers"},
		{[]string{"send", "--key", "k", "--state_dir", dir, "hi"}, 1, "no beamagents dev is running with state directory"},
		{[]string{"approve", "--state_dir", dir, "--intent", "x", "--approver", "me"}, 2, "--approver: does not apply"},
		{[]string{"approve", "--state_dir", dir, "--intent", "x"}, 1, "no beamagents dev is running"},
	} {
		code, out, errOut := execCLI(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}
