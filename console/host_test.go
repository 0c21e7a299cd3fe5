package console_test

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/console"
)

// A page on another site whose name was rebound to the console's address sends its own
// name as Host: every route refuses it before doing anything, reading or acting; the names
// given for a proxy are served.
func TestForeignHostIsRefusedOnEveryRoute(t *testing.T) {
	st, err := console.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	redrives := t.TempDir()
	c := newConsoleWith(t, console.Options{Identity: console.Identity{ApproverHeader: "X-Approver"},
		Redrive: console.Redrive{Dir: redrives}, Hosts: []string{"console.example.com"}}, st)
	port := strings.TrimPrefix(c.url, "http://127.0.0.1")
	do := func(method, path, host string, form url.Values) *http.Response {
		t.Helper()
		var body *strings.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(method, c.url+path, body)
		req.Host = host
		req.Header.Set("X-Approver", "alice@example.com")
		req.Header.Set("Origin", "http://"+host)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	routes := []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/entities/customer-3"}, {"GET", "/traces/00"}, {"GET", "/dead_letters"},
		{"GET", "/search?q=customer"}, {"GET", "/approvals"}, {"GET", "/signin?next=/approvals"}, {"GET", "/events"},
		{"GET", "/no/such/page"}, {"POST", "/approvals/decide"}, {"POST", "/dead_letters/redrive"},
	}
	for _, host := range []string{"rebind.example" + port, "rebind.example", "localhost.rebind.example" + port} {
		for _, r := range routes {
			form := url.Values{"id": {c.approvalID("customer-3")}, "decision": {"approve"}, "reason": {"model_error"}}
			if r.method == "GET" {
				form = nil
			}
			if resp := do(r.method, r.path, host, form); resp.StatusCode != http.StatusMisdirectedRequest {
				t.Errorf("%s %s with Host %s: %d, want 421", r.method, r.path, host, resp.StatusCode)
			}
		}
	}
	if len(c.decisions()) != 0 {
		t.Fatalf("a refused request decided: %v", c.decisions())
	}
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "console.example.com", "CONSOLE.example.com."} {
		if resp := do("GET", "/approvals", host, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /approvals with Host %s: %d, want 200", host, resp.StatusCode)
		}
	}
	// Sign-in goes back only to a path of this site.
	for next, want := range map[string]string{
		"/dead_letters": "/dead_letters", "/%5Cevil.example/x": "/", "/\\evil.example/x": "/", "//evil.example/x": "/",
		"/%2F%2Fevil.example": "/", "https://evil.example/": "/",
	} {
		resp := do("GET", "/signin?next="+url.QueryEscape(next), "127.0.0.1"+port, nil)
		if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || got != want {
			t.Errorf("sign-in with next %q: %d Location %q, want %q", next, resp.StatusCode, got, want)
		}
	}
}
