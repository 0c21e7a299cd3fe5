package main

import (
	"bufio"
	"bytes"
	"context"
	encbin "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// The outputs' hostile values: markup in a key, a detail, a reason, a reply and a trace
// attribute, and keys of 40,000 bytes and 1 MiB.
var (
	hostileKey = []byte(`<script>window.pwned=1</script>`)
	fortyKB    = append([]byte("forty-thousand-"), bytes.Repeat([]byte{'x'}, 40_000-15)...)
	oneMiB     = append([]byte("one-mebibyte-"), bytes.Repeat([]byte{'x'}, 1<<20-13)...)
)

// serverProcess is a command of the built binary serving HTTP, running as its own process.
type serverProcess struct {
	url    string // http://127.0.0.1:PORT
	port   string
	cmd    *exec.Cmd
	stdout *testsvc.SyncBuffer // after the line naming where it serves
	stderr *testsvc.SyncBuffer
	done   chan error
	once   sync.Once
	err    error
}

// startConsoleBinary runs the built binary's console on a free loopback port.
func startConsoleBinary(t *testing.T, args ...string) *serverProcess {
	t.Helper()
	return startServing(t, "console on ", append([]string{"console", "--listen", "127.0.0.1:0", "--poll", "100ms"}, args...)...)
}

// startServing runs the built binary with args and waits for its first line, which must be
// banner followed by the URL it serves (and perhaps more words).
func startServing(t *testing.T, banner string, args ...string) *serverProcess {
	t.Helper()
	p := &serverProcess{stdout: &testsvc.SyncBuffer{}, stderr: &testsvc.SyncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(binary(t), args...)
	p.cmd.Stderr = p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 1)
	go func() {
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		started <- line
		io.Copy(p.stdout, r)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() { p.stop(t) })
	select {
	case line := <-started:
		rest, ok := strings.CutPrefix(line, banner)
		u, err := url.Parse(strings.TrimSpace(strings.SplitN(rest, " ", 2)[0]))
		if !ok || err != nil || u.Port() == "" {
			t.Fatalf("%s did not start: %q\n%s", args[0], line, p.stderr.String())
		}
		p.url, p.port = "http://"+u.Host, u.Port()
	case <-time.After(time.Minute):
		t.Fatalf("%s did not start\n%s", args[0], p.stderr.String())
	}
	return p
}

// stop interrupts the process, which must exit 0.
func (p *serverProcess) stop(t *testing.T) {
	p.cmd.Process.Signal(os.Interrupt) // fails harmlessly when it has exited
	if err := p.exit(); err != nil {
		t.Errorf("%v\n%s", err, p.stderr.String())
	}
}

// exit waits for the process to end (killing it when it has not within 30 seconds) and
// returns how it ended.
func (p *serverProcess) exit() error {
	p.once.Do(func() {
		select {
		case err := <-p.done:
			if err != nil {
				p.err = fmt.Errorf("%s exited: %w", p.cmd.Args[1], err)
			}
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			p.err = fmt.Errorf("%s did not end", p.cmd.Args[1])
		}
	})
	return p.err
}

// open loads u and answers its HTTP status.
func open(t *testing.T, ctx context.Context, u string) int64 {
	t.Helper()
	resp := testsvc.Browse(t, ctx, chromedp.NavigateResponse(u))
	return resp.Status
}

// openUntil loads u until sel's text satisfies ok (the console reads its outputs in the
// background).
func openUntil(t *testing.T, ctx context.Context, u, sel string, ok func(string) bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			t.Fatal(err)
		}
		got := testsvc.PageText(t, ctx, sel)
		if ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%.100s: %s stayed %.300q", u, sel, got)
		}
	}
}

// inert checks that no hostile markup of the page became an element and no script but
// the page's own ran.
func inert(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	ok := testsvc.Browse(t, ctx, chromedp.Evaluate[bool](`window.pwned === undefined && document.scripts.length === 1 && document.querySelectorAll('img').length === 0`))
	if !ok {
		t.Fatalf("%s: hostile content is live:\n%.3000s", page, testsvc.Browse(t, ctx, chromedp.OuterHTML(chromedp.CSS("main"))))
	}
}

// reboundRefused checks that a page under a rebound name (rebind.example, on p's port) is
// refused with 421 at path, and so is each request it makes: fetches are JavaScript
// expressions, each resolving to the status of one.
func reboundRefused(t *testing.T, ctx context.Context, p *serverProcess, path string, fetches ...string) {
	t.Helper()
	if status := open(t, ctx, "http://rebind.example:"+p.port+path); status != http.StatusMisdirectedRequest {
		t.Fatalf("a rebound name read %s: %d", path, status)
	}
	statuses := testsvc.Browse(t, ctx, chromedp.Evaluate[[]int]("Promise.all(["+strings.Join(fetches, ",\n")+"])", chromedp.EvalAwaitPromise))
	if len(statuses) != len(fetches) || slices.ContainsFunc(statuses, func(s int) bool { return s != http.StatusMisdirectedRequest }) {
		t.Fatalf("the rebound page's requests answered %v:\n%s", statuses, strings.Join(fetches, "\n"))
	}
}

// attackerPage serves body as another site's page and returns its address under
// attacker.example (which the test's Chromium resolves to loopback).
func attackerPage(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	return "http://attacker.example:" + port + "/"
}

// crossSiteRefused opens page, another site's, submits its form by clicking the button of
// id button, and checks the answer is the console's refusal, 403.
func crossSiteRefused(t *testing.T, ctx context.Context, page, button string) {
	t.Helper()
	if status := open(t, ctx, page); status != http.StatusOK {
		t.Fatalf("the attacker's page: %d", status)
	}
	// Whatever the console answers is one of its pages, with its heading in main.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID(button)), chromedp.WaitVisible(chromedp.CSS("main h1"))); err != nil {
		t.Fatal(err)
	}
	if got := testsvc.PageText(t, ctx, "main h1"); got != "Refused (403)" {
		t.Fatalf("a cross-site form (%s): %q", button, got)
	}
}

// crossSiteFetch posts form to target from page, another site's, as a script there can:
// without CORS, with the browser's credentials. What it answered is not readable there.
func crossSiteFetch(t *testing.T, ctx context.Context, page, target string, form map[string]string) {
	t.Helper()
	open(t, ctx, page)
	body, _ := json.Marshal(form)
	testsvc.Browse(t, ctx, chromedp.Evaluate[int](fmt.Sprintf(`fetch(%q, {method: 'POST', mode: 'no-cors', credentials: 'include',
		body: new URLSearchParams(%s)}).then(() => 0, () => 0)`, target, body), chromedp.EvalAwaitPromise))
}

func marshalRec(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// typedFile is msgs as a run writes them: the type header, then each record's frame.
func typedFile(t *testing.T, msgs ...proto.Message) []byte {
	t.Helper()
	b := records.Header(msgs[0].ProtoReflect().Descriptor().FullName())
	for _, m := range msgs {
		b = records.AppendFrame(b, marshalRec(t, m))
	}
	return b
}

func framed(t *testing.T, m proto.Message) []byte { return records.AppendFrame(nil, marshalRec(t, m)) }

// outage is a model_error dead letter of key carrying its envelope.
func outage(key []byte, at int64) *pb.ActivationErrorRecord {
	env := &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is my order?")}}
	return records.WithEnvelope(records.DeadLetter(key, at, "model_error", fmt.Sprintf("provider unavailable (a key of %d bytes)", len(key))), env)
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.Write(b)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// writeHostileRun writes a run's outputs: hostile values, dead letters of a 40,000-byte and
// a 1 MiB key with one after them and one still being written (its last bytes returned),
// and a final reply longer than the console reads between two others.
func writeHostileRun(t *testing.T, dir string) (rest []byte) {
	t0 := int64(1767225600000)
	tid := tracing.TraceID(hostileKey, 0)
	ev := func(typ pb.TraceEvent_EventType, attrs map[string]string) proto.Message {
		return &pb.TraceEvent{TraceId: tid[:], EntityKey: hostileKey, EventType: typ, StartMs: t0, EndMs: t0, Attributes: attrs}
	}
	appendTo(t, filepath.Join(dir, "traces.binpb"), typedFile(t,
		ev(pb.TraceEvent_ACTIVATION_START, map[string]string{tracing.AttrActivationKind: tracing.KindExternalEvent}),
		ev(pb.TraceEvent_ERROR, map[string]string{tracing.AttrReason: `"><img src=x onerror="window.pwned=2">`, "hostile": "</td><script>window.pwned=3</script>"}),
		ev(pb.TraceEvent_ACTIVATION_END, map[string]string{tracing.AttrActivationStatus: tracing.StatusOK})))
	markup := outage(hostileKey, t0+1000)
	markup.Detail = `<img src=x onerror="window.pwned=4">`
	raw := records.WithRawRecord(records.DeadLetter(nil, t0, `<script>window.pwned=6</script>`, "raw"), []byte("\xff<script>window.pwned=7</script>"))
	last := framed(t, outage([]byte("after-2"), t0+6000))
	dead := typedFile(t, markup, raw, outage(fortyKB, t0+2000), outage(oneMiB, t0+3000), outage([]byte("after-1"), t0+5000))
	appendTo(t, filepath.Join(dir, "dead_letters.binpb"), append(dead, last[:len(last)-3]...))

	finals := filepath.Join(dir, "finals.binpb")
	appendTo(t, finals, append(typedFile(t, &pb.FinalReply{EntityKey: hostileKey, Message: "</code><script>window.pwned=5</script>", CreatedAtMs: t0}),
		encbin.AppendUvarint(nil, console.MaxRecordBytes+1)...))
	st, _ := os.Stat(finals)
	if err := os.Truncate(finals, st.Size()+console.MaxRecordBytes+1); err != nil { // a hole: never read
		t.Fatal(err)
	}
	appendTo(t, finals, framed(t, &pb.FinalReply{EntityKey: []byte("after-big"), Message: "read on", CreatedAtMs: t0 + 1}))
	return last[len(last)-3:]
}

func equals(want string) func(string) bool { return func(s string) bool { return s == want } }

// The built binary's console, driven by a headless Chromium as an operator's browser and a
// hostile page would: no record stops its ingestion, it answers no foreign Host (DNS
// rebinding), its sign-in goes back only to its own pages, hostile outputs stay text, and no
// other site acts through the operator's browser.
func TestConsoleBinaryInChromium(t *testing.T) {
	ctx := browser(t, "alice@example.com") // skips, or fails under CI, without Chromium
	dir, work := t.TempDir(), t.TempDir()
	rest := writeHostileRun(t, dir)
	redrives := filepath.Join(work, "redriven")
	args := []string{"--db", filepath.Join(work, "console.db"), "--outputs", dir, "--approver_header", "X-Approver",
		"--redrive_dir", redrives, "--allowed_hosts", "console.example"}
	c := startConsoleBinary(t, args...)
	restart := func(then func()) { // by the test, not the subtest that asks: it serves on
		c.stop(t)
		then()
		c = startConsoleBinary(t, args...)
	}

	t.Run("ingestion", func(t *testing.T) {
		openUntil(t, ctx, c.url+"/dead_letters", "main", func(s string) bool { return strings.Contains(s, "after-1") })
		for _, key := range [][]byte{fortyKB, oneMiB} {
			cut := fmt.Sprintf("(%d bytes)", len(key))
			if err := chromedp.Do(ctx, chromedp.Navigate(c.url+"/dead_letters"), chromedp.Click(chromedp.CSS(`a[href="`+console.KeyPath(key)+`"]`)),
				chromedp.WaitVisible(chromedp.ID("entity-key"))); err != nil {
				t.Fatalf("the dead letters page links no key of %d bytes: %v", len(key), err)
			}
			if got := testsvc.PageText(t, ctx, "#entity-key"); !strings.HasPrefix(got, string(key[:40])) || !strings.HasSuffix(got, cut) {
				t.Fatalf("the entity page shows the key as %.80q…", got)
			}
			if got := testsvc.PageText(t, ctx, "#entity-dead"); !strings.Contains(got, "provider unavailable (a key of "+fmt.Sprint(len(key))) {
				t.Fatalf("the entity page's dead letters: %q", got)
			}
		}
		openUntil(t, ctx, c.url+"/", "#series-finals .total", equals("2"))
		if got := testsvc.PageText(t, ctx, "#skipped"); !strings.HasPrefix(got, "1 records") {
			t.Fatalf("skipped: %q", got)
		}
		// Restarted while the last record is being written, the console reads on past it.
		restart(func() {
			appendTo(t, filepath.Join(dir, "dead_letters.binpb"), append(rest, framed(t, outage([]byte("after-3"), 1767225607000))...))
		})
		openUntil(t, ctx, c.url+"/", "#series-dead_letters .total", equals("7"))
		openUntil(t, ctx, c.url+console.KeyPath([]byte("after-3")), "#entity-dead", func(s string) bool { return strings.Contains(s, "provider unavailable") })
	})

	t.Run("host names", func(t *testing.T) {
		// The rebound page's own requests, reading and acting, are refused too.
		reboundRefused(t, ctx, c, "/dead_letters",
			`fetch('/').then(r => r.status)`,
			`fetch('/entities/YWZ0ZXItMQ').then(r => r.status)`,
			`fetch('/dead_letters/redrive', {method: 'POST', body: new URLSearchParams({reason: 'model_error', csrf: 'x'})}).then(r => r.status)`,
			`fetch('/signin?next=/').then(r => r.status)`)
		if status := open(t, ctx, "http://console.example:"+c.port+"/dead_letters"); status != http.StatusOK {
			t.Fatalf("the proxy's name (--allowed_hosts) answered %d", status)
		}
	})

	t.Run("redirects", func(t *testing.T) {
		for _, next := range []string{"/%5Cevil.example/x", `/\evil.example/x`, "//evil.example/x", "/%2F%2Fevil.example/x", "%2F%2Fevil.example",
			"https://evil.example/", "javascript:alert(1)", "/%09/evil.example", "http:/evil.example"} {
			open(t, ctx, c.url+"/signin?next="+next)
			if got := testsvc.Browse(t, ctx, chromedp.Location()); got != c.url+"/" {
				t.Errorf("sign-in with next=%s went to %s", next, got)
			}
		}
		open(t, ctx, c.url+"/signin?next="+url.QueryEscape("/dead_letters"))
		if got := testsvc.Browse(t, ctx, chromedp.Location()); got != c.url+"/dead_letters" {
			t.Fatalf("sign-in back to its own page went to %s", got)
		}
	})

	t.Run("stored script", func(t *testing.T) {
		tid := tracing.TraceID(hostileKey, 0)
		for _, page := range []string{"/", "/dead_letters", console.KeyPath(hostileKey), console.TracePath(tid[:]),
			"/search?q=" + url.QueryEscape(`<script>window.pwned=8</script>`), "/approvals"} {
			if status := open(t, ctx, c.url+page); status != http.StatusOK {
				t.Fatalf("%s: %d", page, status)
			}
			inert(t, ctx, page)
		}
		open(t, ctx, c.url+console.KeyPath(hostileKey))
		if got := testsvc.PageText(t, ctx, "#entity-key"); got != string(hostileKey) {
			t.Fatalf("the key is shown as %q", got)
		}
	})

	t.Run("cross-site actions", func(t *testing.T) {
		page := attackerPage(t, fmt.Sprintf(`<!doctype html><form method="post" action="%s/dead_letters/redrive">
<input name="reason" value="model_error"><input name="csrf" value="guessed"><button id="go">go</button></form>`, c.url))
		crossSiteRefused(t, ctx, page, "go")
		crossSiteFetch(t, ctx, page, c.url+"/dead_letters/redrive", map[string]string{"reason": "model_error", "csrf": "guessed"})
		if m, _ := filepath.Glob(filepath.Join(redrives, "*")); len(m) != 0 {
			t.Fatalf("another site's requests redrove: %v", m)
		}
		// The operator's own redrive, from the console's page, goes through.
		if err := chromedp.Do(ctx, chromedp.Navigate(c.url+"/dead_letters"), chromedp.Click(chromedp.CSS(`button.redrive-reason[value="model_error"]`)),
			chromedp.WaitVisible(chromedp.ID("redrive-result"))); err != nil {
			t.Fatal(err)
		}
		if m, _ := filepath.Glob(filepath.Join(redrives, "*.jsonl")); len(m) != 1 {
			t.Fatalf("the operator's redrive wrote %v", m)
		}
	})
	c.stop(t)
	if !strings.Contains(c.stderr.String(), `who=alice@example.com`) {
		t.Errorf("the redrive is not logged with who did it:\n%s", c.stderr.String())
	}
}

// browser is a headless Chromium that resolves the names a hostile page would use
// (rebind.example, attacker.example) and the console's proxy name to loopback, and no
// other name, and sends approver on every request (an authenticating proxy's header).
func browser(t *testing.T, approver string) context.Context {
	t.Helper()
	return testsvc.Browser(t, approver, chromedp.Flag("host-resolver-rules",
		"MAP rebind.example 127.0.0.1, MAP attacker.example 127.0.0.1, MAP console.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
}
