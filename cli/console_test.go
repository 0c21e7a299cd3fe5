package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	bapubsub "github.com/beamagents/beamagents/pubsub"
)

// updateScreenshots: -update rewrites the console's screenshots under docs/console/. The
// flag is the one Beam's Dataflow runner defines (linked here), which no test reads otherwise.
func updateScreenshots() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

type consoleRun struct {
	url    string
	stderr func() string
}

// startConsole runs `beamagents console ARGS` until the test ends, when it must exit 0.
func startConsole(t *testing.T, args ...string) consoleRun {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	started := make(chan string, 1)
	var stop func()
	consoleStarted = func(u string, s func()) { stop = s; started <- u }
	done := make(chan result, 1)
	var last result
	go func() {
		code, out, errOut := runCLI(t, "", append([]string{"console"}, args...)...)
		done <- result{code, out, errOut}
	}()
	var u string
	select {
	case u = <-started:
	case r := <-done:
		t.Fatalf("console exited %d\n%s\n%s", r.code, r.out, r.err)
	case <-time.After(time.Minute):
		t.Fatal("the console did not start")
	}
	finished := false
	finish := func() {
		if finished {
			return
		}
		finished = true
		stop()
		last = <-done
		consoleStarted = nil
		if last.code != 0 {
			t.Errorf("console exited %d\n%s\n%s", last.code, last.out, last.err)
		}
	}
	t.Cleanup(finish)
	return consoleRun{url: strings.TrimSuffix(u, "/"), stderr: func() string { finish(); return last.err }}
}

// visitUntil opens u until sel's text holds want (the console ingests in the background).
func visitUntil(t *testing.T, ctx context.Context, u, sel, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			t.Fatal(err)
		}
		got := testsvc.PageText(t, ctx, sel)
		if strings.Contains(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s never showed %q: %q", u, sel, want, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// consoleShot saves a screenshot: under docs/console/ with -update, else in a temp dir.
func consoleShot(t *testing.T, ctx context.Context, update bool, name string) {
	t.Helper()
	dir := filepath.Join("..", "docs", "console")
	if !update {
		dir = t.TempDir()
	}
	os.MkdirAll(dir, 0o755)
	shot := testsvc.Browse(t, ctx, chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The console over the demo's outputs, in Chromium: the overview shows the demo's two dead
// letters, customer-2's page its orders.lookup call and a link to its trace, whose waterfall
// shows the model calls.
func TestConsoleOverDemo(t *testing.T) {
	update := updateScreenshots() // before a run resets the runner's flags
	dir := t.TempDir()
	if code, out, errOut := runCLI(t, "", "demo", "--output_dir", dir); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errOut)
	}
	c := startConsole(t, "--db", filepath.Join(dir, "console.db"), "--outputs", filepath.Join(dir, "output"), "--listen", "127.0.0.1:0", "--poll", "100ms")
	ctx := testsvc.Browser(t, "")
	visitUntil(t, ctx, c.url+"/", "#reasons", "envelope_invalid")
	if got := testsvc.PageText(t, ctx, "#reasons"); !strings.Contains(got, "approval_timeout") {
		t.Fatalf("reasons: %q", got)
	}
	if got := testsvc.PageText(t, ctx, "#series-model_calls .total"); got != "8" {
		t.Fatalf("model calls %q", got)
	}
	consoleShot(t, ctx, update, "overview")

	visitUntil(t, ctx, c.url+console.KeyPath([]byte("customer-2")), "#activations", "orders.lookup")
	consoleShot(t, ctx, update, "entity")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#activations a.trace")), chromedp.WaitVisible(chromedp.ID("waterfall"))); err != nil {
		t.Fatal(err)
	}
	if got := testsvc.PageText(t, ctx, "#trace-entity"); got != "customer-2" {
		t.Fatalf("trace of %q", got)
	}
	models := testsvc.Browse(t, ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#waterfall tr.model_call .label')].map(e => e.firstChild.textContent)`))
	if len(models) != 2 || !strings.Contains(models[0], "model call support-scripted-1") || !strings.Contains(models[0], "tokens 190 in / 22 out") {
		t.Fatalf("model-call spans %q", models)
	}
	if got := testsvc.PageText(t, ctx, "#waterfall"); !strings.Contains(got, "tool orders.lookup: OK") || !strings.Contains(got, "waiting for") {
		t.Fatalf("waterfall: %q", got)
	}
	consoleShot(t, ctx, update, "trace")
	visitUntil(t, ctx, c.url+"/dead_letters", "main", "approval_timeout")
	consoleShot(t, ctx, update, "dead_letters")
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// A redrive from /dead_letters, in Chromium, of the dead letters a model outage left writes
// envelopes that a later run accepts: restored from the outage run's exports, it ends with
// every key exactly as in a run where the model never failed.
func TestConsoleRedriveThenRun(t *testing.T) {
	update := updateScreenshots()
	dir := t.TempDir()
	keys := []string{"k0", "k1", "k2", "k3"}
	script, events, exports := outageTraffic(t, keys)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	scriptPath := write("script.jsonl", script)
	up := write("up.json", []byte(fmt.Sprintf(`{"script":%q}`, scriptPath)))
	outage := write("outage.json", []byte(fmt.Sprintf(`{"script":%q,"down":["k1","k3"]}`, scriptPath)))
	ring := write("ring.json", []byte(`{"active":"t","keys":[{"id":"t","secret":"`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))+`"}]}`))
	write("in/events.jsonl", events)
	write("in/exports.jsonl", exports)
	run := func(out, config, input, restore string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "", "run", "--agent", flakyAgent, "--agent_config", config, "--keyring", "file:"+ring,
			"--input", input, "--restore", restore, "--output_dir", filepath.Join(dir, out), "--mode", "streaming")
		if code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", out, code, stdout, stderr)
		}
	}
	run("never_failed", up, filepath.Join(dir, "in", "*.jsonl"), "")
	run("outage", outage, filepath.Join(dir, "in", "*.jsonl"), "")

	redriveDir := filepath.Join(dir, "redriven")
	c := startConsole(t, "--db", filepath.Join(dir, "console.db"), "--outputs", filepath.Join(dir, "outage"), "--listen", "127.0.0.1:0",
		"--approver_header", "X-Approver", "--redrive_dir", redriveDir)

	// Acting without the identity, the token or from another site changes nothing.
	form := url.Values{"reason": {"model_error"}}
	for name, h := range map[string]http.Header{
		"no identity":  {},
		"no token":     {"X-Approver": {"mallory"}},
		"foreign site": {"X-Approver": {"mallory"}, "Sec-Fetch-Site": {"cross-site"}},
	} {
		req, _ := http.NewRequest("POST", c.url+"/dead_letters/redrive", strings.NewReader(form.Encode()))
		req.Header = h
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 && resp.StatusCode != 403 {
			t.Errorf("%s: status %d", name, resp.StatusCode)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(redriveDir, "*.jsonl")); len(m) != 0 {
		t.Fatalf("refused redrives wrote %v", m)
	}

	ctx := testsvc.Browser(t, "alice@example.com")
	visitUntil(t, ctx, c.url+"/dead_letters", "main", "model_error")
	if n := testsvc.Browse(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll('input[type=checkbox][name=id]').length`)); n != 6 {
		t.Fatalf("%d redrivable dead letters listed, want 6", n)
	}
	consoleShot(t, ctx, update, "dead_letters_redrive")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("button.redrive-reason")), chromedp.WaitVisible(chromedp.ID("redrive-result"))); err != nil {
		t.Fatal(err)
	}
	consoleShot(t, ctx, update, "redriven")
	if got := testsvc.PageText(t, ctx, "#redrive-result"); !strings.HasPrefix(got, "6 envelopes of 6 chosen dead letters") {
		t.Fatalf("redrive: %q", got)
	}
	file := testsvc.PageText(t, ctx, "#redrive-where")
	visitUntil(t, ctx, c.url+"/dead_letters", "#actions", "alice@example.com")
	if !strings.Contains(c.stderr(), `console: redrive" who=alice@example.com`) {
		t.Errorf("the redrive is not logged with who did it")
	}
	if filepath.Dir(file) != redriveDir {
		t.Fatalf("redrive file %s", file)
	}
	write("again/exports.jsonl", exports)
	data, _ := os.ReadFile(file)
	write("again/redriven.jsonl", data)
	run("recovered", up, filepath.Join(dir, "again", "*.jsonl"), filepath.Join(dir, "outage", "snapshots.binpb"))
	want, _ := os.ReadFile(filepath.Join(dir, "never_failed", "snapshots.binpb"))
	got, _ := os.ReadFile(filepath.Join(dir, "recovered", "snapshots.binpb"))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatal("after the console's redrive the keys' exported state differs from the run that never failed")
	}
	dead, _ := readDeadLetters(filepath.Join(dir, "recovered", "dead_letters.binpb"))
	if len(dead) != 0 {
		t.Fatalf("the redriven envelopes dead-lettered: %v", dead)
	}
}

// Output topics through --subscription, basic-auth users, and a redrive published to
// --redrive_topic.
func TestConsolePubSub(t *testing.T) {
	srv := pstest.NewServer()
	defer srv.Close()
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	ctx := context.Background()
	const p = "projects/p"
	for _, n := range []string{"errors", "traces", "events"} {
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: p + "/topics/" + n}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"errors", "traces"} {
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: p + "/subscriptions/console-" + n, Topic: p + "/topics/" + n, AckDeadlineSeconds: 10}); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(topic string, typ string, m proto.Message) {
		b := marshalDet(t, m)
		msg, err := bapubsub.OutputMessage(typ, b)
		if err != nil {
			t.Fatal(err)
		}
		srv.Publish(p+"/topics/"+topic, msg.GetData(), msg.GetAttributes())
	}
	env := &pb.AgentEnvelope{EntityKey: []byte("k7"), EventTimeMs: 1767225600000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hello")}}
	publish("errors", "beam_agents.v1.ActivationErrorRecord", &pb.ActivationErrorRecord{EntityKey: []byte("k7"), Reason: "model_error", EventTimeMs: 1767225600000,
		FailedInput: &pb.ActivationErrorRecord_Envelope{Envelope: marshalDet(t, env)}})
	publish("traces", "beam_agents.v1.TraceEvent", &pb.TraceEvent{TraceId: bytes.Repeat([]byte{1}, 16), EntityKey: []byte("k7"), EventType: pb.TraceEvent_LLM_CALL, StartMs: 1767225600000, EndMs: 1767225600000})
	users := filepath.Join(t.TempDir(), "users")
	os.WriteFile(users, []byte("ops:pa55word\n"), 0o600)
	c := startConsole(t, "--db", filepath.Join(t.TempDir(), "console.db"), "--subscription", p+"/subscriptions/console-errors",
		"--subscription", p+"/subscriptions/console-traces", "--listen", "127.0.0.1:0", "--approver_users", "file:"+users, "--redrive_topic", p+"/topics/events")
	get := func(path string, auth bool) string {
		req, _ := http.NewRequest("GET", c.url+path, nil)
		if auth {
			req.SetBasicAuth("ops", "pa55word")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(get("/", false), `data-total="1"`) || !strings.Contains(get("/", false), "model_error") {
		if time.Now().After(deadline) {
			t.Fatalf("the topics' records never showed:\n%s", get("/", false))
		}
		time.Sleep(200 * time.Millisecond)
	}
	m := csrfRE.FindStringSubmatch(get("/dead_letters", true))
	if m == nil {
		t.Fatal("no redrive form for a signed-in user")
	}
	req, _ := http.NewRequest("POST", c.url+"/dead_letters/redrive", strings.NewReader(url.Values{"reason": {"model_error"}, "csrf": {m[1]}}.Encode()))
	req.SetBasicAuth("ops", "pa55word")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("redrive: %d", resp.StatusCode)
	}
	var redriven []*pstest.Message
	for _, msg := range srv.Messages() {
		if msg.Topic == p+"/topics/events" {
			redriven = append(redriven, msg)
		}
	}
	if len(redriven) != 1 || !bytes.Equal(redriven[0].Data, marshalDet(t, env)) {
		t.Fatalf("published %v", redriven)
	}
}

// Flags the console refuses.
func TestConsoleFlags(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("ops:pw\n"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no store", []string{"--outputs", dir}, "--db: required"},
		{"no source", []string{"--db", dir + "/c.db"}, "--outputs: required"},
		{"extra argument", []string{"--db", dir + "/c.db", "--outputs", dir, "more"}, "unexpected argument"},
		{"bad redrive topic", []string{"--db", dir + "/c.db", "--outputs", dir, "--redrive_topic", "events"}, "--redrive_topic"},
		{"two redrive targets", []string{"--db", dir + "/c.db", "--outputs", dir, "--redrive_dir", dir, "--redrive_topic", "projects/p/topics/t"}, "choose one"},
		{"two identity sources", []string{"--db", dir + "/c.db", "--outputs", dir, "--approver_header", "X", "--approver_users", "file:" + users}, "choose one"},
		{"beyond loopback without identity", []string{"--db", dir + "/c.db", "--outputs", dir, "--listen", "0.0.0.0:0"}, "beyond loopback"},
		{"bad subscription", []string{"--db", dir + "/c.db", "--subscription", "errors"}, "--subscription"},
		{"bad poll", []string{"--db", dir + "/c.db", "--outputs", dir, "--poll", "0s"}, "--poll"},
		{"bad memory store", []string{"--db", dir + "/c.db", "--outputs", dir, "--memory_store", "bbolt:x.db"}, "--memory_store"},
		{"missing rehearsal report", []string{"--db", dir + "/c.db", "--rehearsal", dir + "/none.jsonl"}, "--rehearsal:"},
		{"not a rehearsal report", []string{"--db", dir + "/c.db", "--rehearsal", users}, "report_invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"console"}, tc.args...)...)
			if code != 2 || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want 2 and %q in:\n%s%s", code, tc.want, out, errOut)
			}
		})
	}
}

func marshalDet(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The console answers only to the names it serves: a rebound name gets 421 on any route,
// --allowed_hosts names a proxy's, and sign-in goes back only to a path of its own.
func TestConsoleAllowedHosts(t *testing.T) {
	c := startConsole(t, "--db", filepath.Join(t.TempDir(), "console.db"), "--outputs", t.TempDir(), "--listen", "127.0.0.1:0",
		"--approver_header", "X-Approver", "--allowed_hosts", "console.example.com, proxy.example:8443")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path, host string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", c.url+path, nil)
		req.Host = host
		req.Header.Set("X-Approver", "alice@example.com")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for host, want := range map[string]int{
		"rebind.example:8090": http.StatusMisdirectedRequest, "proxy.example:9999": http.StatusMisdirectedRequest,
		"console.example.com": http.StatusOK, "proxy.example:8443": http.StatusOK, "localhost:8090": http.StatusOK,
	} {
		if resp := get("/dead_letters", host); resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
	if resp := get("/signin?next=/%5Cevil.example/x", "console.example.com"); resp.Header.Get("Location") != "/" {
		t.Errorf("sign-in redirect to %q, want /", resp.Header.Get("Location"))
	}
}

// console --memory_store lists a key's long-term memory on its entity page, from the store a
// run's handlers recall from; the key needs no output in the followed folders.
func TestConsoleMemoryStore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "memory.db")
	mem, err := backend.OpenSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Put(context.Background(), ltm.Entry{Entity: []byte("cust-7"), Namespace: "history", Key: "tone", Value: []byte("formal"), Seq: 4}); err != nil {
		t.Fatal(err)
	}
	mem.Close()
	t.Setenv("CONSOLE_MEMORY", "sqlite:"+db)
	c := startConsole(t, "--db", filepath.Join(dir, "console.db"), "--outputs", dir, "--listen", "127.0.0.1:0", "--memory_store", "env:CONSOLE_MEMORY")
	resp, err := http.Get(c.url + console.KeyPath([]byte("cust-7")))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-namespace="history"`) || !strings.Contains(string(body), "formal") {
		t.Fatalf("cust-7's page: %d\n%.2000s", resp.StatusCode, body)
	}
}
