package console_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

const refundArgs = `{"payments.refund.order_id":"A-2002","payments.refund.amount_cents":"4599","payments.refund.reason":"arrived broken"}`

type consoleFixture struct {
	*fixture
	url string
	mu  sync.Mutex
	out []*pb.AgentEnvelope
}

func (c *consoleFixture) decisions() []*pb.AgentEnvelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*pb.AgentEnvelope(nil), c.out...)
}

// newConsole serves the console on a loopback port, with three pending approvals.
func newConsole(t *testing.T, o console.Options) *consoleFixture {
	t.Helper()
	return newConsoleWith(t, o, nil)
}

// newConsoleWith is newConsole with a store of outputs beside the approvals.
func newConsoleWith(t *testing.T, o console.Options, st *console.Store) *consoleFixture {
	t.Helper()
	c := &consoleFixture{fixture: newFixture(t)}
	c.e.Approvals().SetSink(func(_ context.Context, env *pb.AgentEnvelope) error {
		c.mu.Lock()
		c.out = append(c.out, env)
		c.mu.Unlock()
		return nil
	})
	for i, entity := range []string{"customer-3", "customer-4", "customer-7"} {
		ti := refundIntent(t, c.kr, entity, pb.ToolIntent_APPROVAL, refundArgs)
		ti.ExpiresAtMs = t0 + int64(i+1)*60_000
		intent.Sign(ti, c.kr)
		if out, err := c.e.Handle(context.Background(), ti); err != nil || !out.Pending {
			t.Fatal(out, err)
		}
	}
	o.Approvals, o.Store, o.ReadNeedsIdentity = c.e.Approvals(), st, st == nil
	h, err := console.New(o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c.url = "http://" + l.Addr().String()
	return c
}

func (c *consoleFixture) approvalID(entity string) string {
	for _, ap := range c.e.Approvals().List() {
		if string(ap.Intent.GetEntityKey()) == entity {
			return ap.Intent.GetIntentId()
		}
	}
	return ""
}

var tokenRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (c *consoleFixture) page(t *testing.T, header http.Header) (int, string) {
	req, _ := http.NewRequest("GET", c.url+"/approvals", nil)
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Decisions need an identity, a same-origin request and the approver's CSRF token.
func TestConsoleRefusesCrossSite(t *testing.T) {
	c := newConsole(t, console.Options{Identity: console.Identity{ApproverHeader: "X-Approver"}})
	who := http.Header{"X-Approver": {"alice@example.com"}}
	if code, _ := c.page(t, http.Header{}); code != http.StatusUnauthorized {
		t.Fatalf("no identity: %d", code)
	}
	code, body := c.page(t, who)
	m := tokenRE.FindStringSubmatch(body)
	if code != 200 || m == nil || !strings.Contains(body, "customer-3") || !strings.Contains(body, "payments.refund") {
		t.Fatalf("page %d:\n%s", code, body)
	}
	token := m[1]
	id := c.approvalID("customer-3")
	post := func(form url.Values, h http.Header) int {
		req, _ := http.NewRequest("POST", c.url+"/approvals/decide", strings.NewReader(form.Encode()))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	form := url.Values{"intent_id": {id}, "decision": {"approve"}, "csrf": {token}}
	for _, tc := range []struct {
		name   string
		form   url.Values
		header http.Header
		want   int
	}{
		{"cross-site fetch", form, http.Header{"X-Approver": {"alice@example.com"}, "Sec-Fetch-Site": {"cross-site"}}, 403},
		{"same-site fetch", form, http.Header{"X-Approver": {"alice@example.com"}, "Sec-Fetch-Site": {"same-site"}}, 403},
		{"foreign origin", form, http.Header{"X-Approver": {"alice@example.com"}, "Origin": {"http://evil.example"}}, 403},
		{"no token", url.Values{"intent_id": {id}, "decision": {"approve"}}, who, 403},
		{"another approver's token", form, http.Header{"X-Approver": {"mallory@example.com"}}, 403},
		{"no identity", form, http.Header{}, 401},
		{"bad decision", url.Values{"intent_id": {id}, "decision": {"maybe"}, "csrf": {token}}, who, 400},
		{"unknown approval", url.Values{"intent_id": {"nope"}, "decision": {"approve"}, "csrf": {token}}, who, 404},
	} {
		if got := post(tc.form, tc.header); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	if n := len(c.decisions()); n != 0 {
		t.Fatalf("%d decisions published by refused requests", n)
	}
	same := who.Clone()
	same.Set("Origin", c.url)
	same.Set("Sec-Fetch-Site", "same-origin")
	if got := post(form, same); got != http.StatusSeeOther {
		t.Fatalf("same-origin decision: %d", got)
	}
	if got := post(form, same); got != http.StatusConflict {
		t.Fatalf("second decision: %d", got)
	}
	if d := c.decisions(); len(d) != 1 || d[0].GetApproval().GetApprover() != "alice@example.com" {
		t.Fatalf("decisions %v", d)
	}
}

func TestConsoleBasicAuth(t *testing.T) {
	c := newConsole(t, console.Options{Identity: console.Identity{BasicAuth: map[string]string{"bob": "s3cret"}}})
	req, _ := http.NewRequest("GET", c.url+"/approvals", nil)
	req.SetBasicAuth("bob", "wrong")
	resp, _ := http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("wrong password: %d", resp.StatusCode)
	}
	req.SetBasicAuth("bob", "s3cret")
	resp, _ = http.DefaultClient.Do(req)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `<b id="who">bob</b>`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	if _, err := console.New(console.Options{Approvals: c.e.Approvals()}); err == nil {
		t.Fatal("a console without an identity source")
	}
}

// The console in a real headless Chromium: approve one refund, reject another, and see a
// third refused after its deadline passed while the page was open; then it shows as expired.
func TestConsoleInChromium(t *testing.T) {
	c := newConsole(t, console.Options{Identity: console.Identity{ApproverHeader: "X-Approver"}})
	ctx := browser(t)
	approve, reject, late := c.approvalID("customer-3"), c.approvalID("customer-4"), c.approvalID("customer-7")
	text := func(sel string, into *string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			v, err := chromedp.Text(chromedp.CSS(sel))(ctx, tg)
			*into = strings.TrimSpace(v)
			return err
		})
	}
	state := func(id string) string { return "#row-" + id + " td.state" }
	var state3, state4, refused, state7 string
	err := chromedp.Do(ctx,
		withHeader("X-Approver", "alice@example.com"),
		chromedp.Navigate(c.url+"/approvals"),
		chromedp.WaitVisible(chromedp.ID("approve-"+approve)),
		chromedp.Click(chromedp.ID("approve-"+approve)),
		chromedp.WaitNotPresent(chromedp.ID("approve-"+approve)),
		text(state(approve), &state3),
		chromedp.Click(chromedp.ID("reject-"+reject)),
		chromedp.WaitNotPresent(chromedp.ID("reject-"+reject)),
		text(state(reject), &state4),
		chromedp.Func(func(context.Context, *chromedp.Target) error {
			c.clock.set(t0 + 3*60_000) // customer-7's deadline passes while its row is open
			return nil
		}),
		chromedp.Click(chromedp.ID("approve-"+late)),
		chromedp.WaitVisible(chromedp.ID("error")),
		text("#error", &refused),
		chromedp.Navigate(c.url+"/approvals"),
		chromedp.WaitVisible(chromedp.CSS(state(late))),
		text(state(late), &state7),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "approvals")
	if state3 != "approved by alice@example.com" || state4 != "rejected by alice@example.com" {
		t.Fatalf("states %q %q", state3, state4)
	}
	if !strings.Contains(refused, "expired") || state7 != "expired" {
		t.Fatalf("late approval: refused %q, state %q", refused, state7)
	}
	d := c.decisions()
	if len(d) != 2 || !d[0].GetApproval().GetApproved() || d[1].GetApproval().GetApproved() ||
		d[0].GetApproval().GetIntentId() != approve || d[1].GetApproval().GetIntentId() != reject {
		t.Fatalf("decisions %v", d)
	}
}
