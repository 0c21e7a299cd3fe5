package cli

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

var (
	liveTokenRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	liveRowRE   = regexp.MustCompile(`<tr id="row-([0-9a-f-]+)" data-state="pending">\s*<td>(?:<a [^>]*>)?(customer-\d+)<`)
)

// approveThroughConsole acts as the person at the console: it waits for the two refund
// approvals, approves customer-3's and rejects customer-4's.
func approveThroughConsole(t *testing.T, consoleURL, user, password string) {
	approveThroughConsoleAs(t, consoleURL, user, password, map[string]string{"customer-3": "approve", "customer-4": "reject"})
}

// approveThroughConsoleAs makes the decisions (entity → approve or reject) in the console at
// consoleURL as user, once each approval is listed.
func approveThroughConsoleAs(t *testing.T, consoleURL, user, password string, decisions map[string]string) {
	deadline := time.Now().Add(5 * time.Minute)
	for len(decisions) > 0 && time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", consoleURL+"approvals", nil)
		req.SetBasicAuth(user, password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil { // not listening yet
			time.Sleep(100 * time.Millisecond)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		token := liveTokenRE.FindStringSubmatch(string(body))
		for _, m := range liveRowRE.FindAllStringSubmatch(string(body), -1) {
			decision, ok := decisions[m[2]]
			if !ok || token == nil {
				continue
			}
			form := url.Values{"intent_id": {m[1]}, "decision": {decision}, "csrf": {token[1]}}
			post, _ := http.NewRequest("POST", consoleURL+"approvals/decide", strings.NewReader(form.Encode()))
			post.SetBasicAuth(user, password)
			post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			post.Header.Set("Origin", strings.TrimSuffix(consoleURL, "/"))
			post.Header.Set("Sec-Fetch-Site", "same-origin")
			r, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(post)
			if err != nil || r.StatusCode != http.StatusSeeOther {
				t.Errorf("decision on %s: %v %v", m[2], r, err)
				return
			}
			r.Body.Close()
			delete(decisions, m[2])
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(decisions) > 0 {
		t.Errorf("approvals never listed: %v", decisions)
	}
}

// End to end on Prism over Pub/Sub (pstest): events → tool intents → the effector runs the
// tools → results resume the agents → final replies; the refund waits for an approval given
// through the console, then runs and the agent replies; the rejected refund ends the
// conversation with a dead letter.
func TestDemoLive(t *testing.T) {
	sawOutputs := make(chan bool, 1)
	liveConsoleReady = func(u, user, password string) {
		approveThroughConsole(t, u, user, password)
		sawOutputs <- consoleShows(u, regexp.MustCompile(`id="series-finals"><div>Final replies</div><div class="total" data-total="[1-9]`), 5*time.Minute)
	}
	defer func() { liveConsoleReady = nil }()
	code, out, errOut := runCLI(t, "", "demo", "--live", "--output_dir", t.TempDir(), "--console", "127.0.0.1:0", "--live_timeout", "6m")
	t.Log(out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"final reply  customer-1", "final reply  customer-2", "final reply  customer-3", "final reply  customer-5",
		"dead letter  customer-4",
		"every conversation answered: customer-1, customer-2, customer-3, customer-4, customer-5",
		"approvals                    2", "decisions                    2", "executed                     2",
		"rejected                     0", "expired                      0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !<-sawOutputs {
		t.Errorf("the console never showed the live run's final replies")
	}
	if !strings.Contains(out, "Order A-1001 shipped yesterday and arrives on Thursday.") {
		t.Errorf("customer-2's reply does not come from the lookup")
	}
}

// consoleShows reports whether the console's overview at u comes to hold want.
func consoleShows(u string, want *regexp.Regexp, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(u)
		if err != nil {
			return false // the console closed: the run ended first
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want.Match(b) {
			return true
		}
	}
	return false
}
