package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

const apiToken = "tok-0123456789abcdef"

// call sends a JSON API request: body is sent as JSON (with contentType), header adds to it.
func call(t *testing.T, url, method, path string, body any, contentType string, header http.Header) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, url+path, rd)
	for k, v := range header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
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

func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// The JSON API takes a bearer token (or the proxy's header), never basic auth alone; it
// refuses cross-site and cross-origin requests, a body that is not JSON and a host it does
// not serve; a decision is signed by the effector with the token's user as approver, and a
// refusal carries its stable code.
func TestAPIApprovals(t *testing.T) {
	c := newConsoleWith(t, console.Options{
		Identity: console.Identity{BasicAuth: map[string]string{"alice": "pw"}},
		Tokens:   map[string]string{apiToken: "bot"},
	}, nil)
	bearer := http.Header{"Authorization": {"Bearer " + apiToken}}
	basic := http.Header{"Authorization": {"Basic YWxpY2U6cHc="}} // alice:pw
	for name, h := range map[string]http.Header{"none": {}, "basic auth": basic, "a wrong token": {"Authorization": {"Bearer tok-wrong-wrong-wrong"}}} {
		if code, out := call(t, c.url, "GET", "/api/approvals", nil, "", h); code != 401 || errCode(out) != "console_refused" {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	code, out := call(t, c.url, "GET", "/api/approvals", nil, "", bearer)
	list, _ := out["approvals"].([]any)
	if code != 200 || len(list) != 3 {
		t.Fatalf("list: %d %v", code, out)
	}
	first := list[0].(map[string]any)
	if first["state"] != "pending" || first["entity_key"] != "customer-3" || first["tool"] != "payments.refund" {
		t.Fatalf("first approval: %v", first)
	}
	id := c.approvalID("customer-3")
	decide := map[string]string{"intent_id": id, "decision": "approve", "note": "within the policy"}
	with := func(extra http.Header) http.Header {
		h := bearer.Clone()
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	for name, tc := range map[string]struct {
		h    http.Header
		ct   string
		code int
	}{
		"a form":       {bearer, "application/x-www-form-urlencoded", 415},
		"cross-site":   {with(http.Header{"Sec-Fetch-Site": {"cross-site"}}), "application/json", 403},
		"other origin": {with(http.Header{"Origin": {"http://evil.example"}}), "application/json", 403},
		"other host":   {with(http.Header{"Host": {"evil.example"}}), "application/json", 421},
	} {
		if code, out := call(t, c.url, "POST", "/api/approvals/decide", decide, tc.ct, tc.h); code != tc.code {
			t.Errorf("%s: %d %v, want %d", name, code, out, tc.code)
		}
	}
	if len(c.decisions()) != 0 {
		t.Fatalf("a refused request decided: %v", c.decisions())
	}
	code, out = call(t, c.url, "POST", "/api/approvals/decide", decide, "application/json", bearer)
	if code != 200 || out["state"] != "approved" || out["approver"] != "bot" || out["entity_key"] != "customer-3" {
		t.Fatalf("decide: %d %v", code, out)
	}
	d := c.decisions()
	if len(d) != 1 || !d[0].GetApproval().GetApproved() || d[0].GetApproval().GetApprover() != "bot" || len(d[0].GetApproval().GetSignature()) == 0 ||
		d[0].GetApproval().GetNote() != "within the policy" {
		t.Fatalf("decisions: %v", d)
	}
	for name, tc := range map[string]struct {
		body any
		code int
		want string
	}{
		"decided again":   {decide, 409, "approval_decided"},
		"unknown":         {map[string]string{"intent_id": "no-such-id", "decision": "reject"}, 404, "approval_unknown"},
		"a bad decision":  {map[string]string{"intent_id": id, "decision": "maybe"}, 400, "console_input_invalid"},
		"an approver":     {map[string]string{"intent_id": id, "decision": "reject", "approver": "mallory"}, 400, "console_input_invalid"},
		"unknown members": {map[string]string{"intent_id": id, "decision": "reject", "why": "x"}, 400, "console_input_invalid"},
		"a note too long": {map[string]string{"intent_id": id, "decision": "reject", "note": strings.Repeat("n", 4097)}, 400, "console_input_invalid"},
	} {
		if code, out := call(t, c.url, "POST", "/api/approvals/decide", tc.body, "application/json", bearer); code != tc.code || errCode(out) != tc.want {
			t.Errorf("%s: %d %v, want %d %s", name, code, out, tc.code, tc.want)
		}
	}
	if code, out := call(t, c.url, "POST", "/api/events", map[string]string{"key": "k", "body": "b"}, "application/json", bearer); code != 404 {
		t.Errorf("events without Ingest: %d %v", code, out)
	}
}

// Behind an authenticating proxy, its header is a program's identity too.
func TestAPIProxyHeader(t *testing.T) {
	c := newConsole(t, console.Options{Identity: console.Identity{ApproverHeader: "X-Approver"}})
	id := c.approvalID("customer-4")
	if code, out := call(t, c.url, "POST", "/api/approvals/decide", map[string]string{"intent_id": id, "decision": "reject"}, "application/json", nil); code != 401 {
		t.Fatalf("no header: %d %v", code, out)
	}
	code, out := call(t, c.url, "POST", "/api/approvals/decide", map[string]string{"intent_id": id, "decision": "reject"}, "application/json",
		http.Header{"X-Approver": {"carol@example.com"}})
	if code != 200 || out["state"] != "rejected" || out["approver"] != "carol@example.com" {
		t.Fatalf("decide: %d %v", code, out)
	}
}

// POST /api/events hands the key and body to Ingest and answers its event time; a stopping
// server answers 503 console_unavailable.
func TestAPIEvents(t *testing.T) {
	type got struct{ key, body string }
	var seen []got
	stopping := false
	h, err := console.New(console.Options{
		Store: openStore(t, filepath.Join(t.TempDir(), "console.db")), Tokens: map[string]string{apiToken: "bot"},
		Ingest: func(_ context.Context, key, body []byte) (int64, error) {
			if stopping {
				return 0, &console.Error{Code: console.CodeUnavailable, Detail: "stopping"}
			}
			seen = append(seen, got{string(key), string(body)})
			return 1767225600000, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	defer srv.Close()
	url := "http://" + l.Addr().String()
	bearer := http.Header{"Authorization": {"Bearer " + apiToken}}
	code, out := call(t, url, "POST", "/api/events", map[string]string{"key": "k1", "body": "hello"}, "application/json", bearer)
	if code != 202 || out["event_time_ms"] != float64(1767225600000) || out["key"] != "k1" {
		t.Fatalf("event: %d %v", code, out)
	}
	code, out = call(t, url, "POST", "/api/events", map[string]string{"key": "k2", "body_base64": "AP8="}, "application/json", bearer)
	if code != 202 || len(seen) != 2 || seen[1] != (got{"k2", "\x00\xff"}) {
		t.Fatalf("binary event: %d %v %q", code, out, seen)
	}
	for name, body := range map[string]map[string]string{"no key": {"body": "x"}, "both forms": {"key": "k", "body": "x", "body_base64": "eA=="}} {
		if code, out := call(t, url, "POST", "/api/events", body, "application/json", bearer); code != 400 || errCode(out) != "console_input_invalid" {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	stopping = true
	if code, out := call(t, url, "POST", "/api/events", map[string]string{"key": "k3"}, "application/json", bearer); code != 503 || errCode(out) != "console_unavailable" {
		t.Fatalf("stopping: %d %v", code, out)
	}
	if _, err := console.New(console.Options{Store: openStore(t, filepath.Join(t.TempDir(), "console.db")), Ingest: func(context.Context, []byte, []byte) (int64, error) { return 0, nil }}); err == nil || !strings.Contains(err.Error(), "console_config_invalid") {
		t.Fatalf("Ingest without a program identity: %v", err)
	}
	if _, err := console.New(console.Options{Store: openStore(t, filepath.Join(t.TempDir(), "console.db")), Tokens: map[string]string{"short": "bot"}}); err == nil {
		t.Fatal("a short token was accepted")
	}
}

// POST /api/signals: a signal for a key, its sender the caller, its id given or random; one
// out of the runtime's bounds is refused with the one rule the runtime applies
// (records.CheckSignal); a console without a Signal function takes none.
func TestAPISignals(t *testing.T) {
	var seen []*pb.AgentEnvelope_Signal
	h, err := console.New(console.Options{
		Store: openStore(t, filepath.Join(t.TempDir(), "console.db")), Tokens: map[string]string{apiToken: "bot"},
		Signal: func(_ context.Context, sig *pb.AgentEnvelope_Signal) (int64, error) {
			seen = append(seen, sig)
			return 1767225600000, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	defer srv.Close()
	url := "http://" + l.Addr().String()
	bearer := http.Header{"Authorization": {"Bearer " + apiToken}}
	code, out := call(t, url, "POST", "/api/signals", map[string]string{"key": "r1", "name": "carrier", "id": "scan-77", "payload": "scanned"}, "application/json", bearer)
	if code != 202 || out["id"] != "scan-77" || out["key"] != "r1" || len(seen) != 1 {
		t.Fatalf("signal: %d %v", code, out)
	}
	if s := seen[0]; s.GetSender() != "bot" || string(s.GetEntityKey()) != "r1" || string(s.GetPayload()) != "scanned" || s.GetName() != "carrier" {
		t.Fatalf("signal taken as %v", s)
	}
	code, out = call(t, url, "POST", "/api/signals", map[string]string{"key": "r1", "name": "carrier", "payload_base64": "AP8="}, "application/json", bearer)
	if code != 202 || len(seen) != 2 || len(seen[1].GetSignalId()) != 32 || string(seen[1].GetPayload()) != "\x00\xff" {
		t.Fatalf("signal with a random id: %d %v", code, out)
	}
	for name, body := range map[string]map[string]string{
		"no key":       {"name": "carrier"},
		"no name":      {"key": "r1"},
		"long name":    {"key": "r1", "name": strings.Repeat("n", records.MaxSignalNameBytes+1)},
		"long id":      {"key": "r1", "name": "carrier", "id": strings.Repeat("i", records.MaxSignalIDBytes+1)},
		"large":        {"key": "r1", "name": "carrier", "payload": strings.Repeat("p", records.MaxSignalPayloadBytes+1)},
		"both payload": {"key": "r1", "name": "carrier", "payload": "x", "payload_base64": "eA=="},
	} {
		if code, out := call(t, url, "POST", "/api/signals", body, "application/json", bearer); code != 400 || errCode(out) != "console_input_invalid" {
			t.Errorf("%s: %d %v", name, code, out)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("a refused signal was taken: %d", len(seen))
	}
	h2, err := console.New(console.Options{Store: openStore(t, filepath.Join(t.TempDir(), "console.db")), Tokens: map[string]string{apiToken: "bot"}})
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	srv2 := &http.Server{Handler: h2}
	go srv2.Serve(l2)
	defer srv2.Close()
	if code, out := call(t, "http://"+l2.Addr().String(), "POST", "/api/signals", map[string]string{"key": "r1", "name": "carrier"}, "application/json", bearer); code != 404 {
		t.Fatalf("a console without signals: %d %v", code, out)
	}
}
