package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// The JSON API (/api/…) is for programs: `beamagents approve --to`, `beamagents send`, a
// script. Its identity rules are the page's, for programs (docs/console.md, "The JSON API"):
//
//   - an identity on every request, reading included: a bearer token (Options.Tokens,
//     "Authorization: Bearer TOKEN") or the authenticating proxy's header
//     (Identity.ApproverHeader); never basic auth alone, which a browser sends by itself, like
//     a cookie, to any page that asks;
//   - the Host rules of every page (hostGuard);
//   - a request a browser marks as cross-site (Sec-Fetch-Site) or from another origin
//     (Origin) is refused, and a POST must say Content-Type: application/json, which no HTML
//     form can send without the cross-origin preflight this server never answers.
//
// Every refusal and failure is a JSON body {"error":{"code":CODE,"detail":TEXT}} with a
// stable code: this package's, or the effector's for a decision it refuses
// (approval_unknown, approval_expired, approval_decided, intent_id_conflict).

// maxAPIBody bounds a JSON API request's body.
const maxAPIBody = 1 << 20

// APIApproval is one approval as GET /api/approvals lists it.
type APIApproval struct {
	IntentID string `json:"intent_id"`
	// EntityKey is the key as text when it is valid UTF-8 (else empty); EntityKeyBase64
	// always holds its bytes.
	EntityKey       string `json:"entity_key"`
	EntityKeyBase64 string `json:"entity_key_base64"`
	Tool            string `json:"tool"`
	// Args are the arguments in the tool's own shape; ArgsJSON the intent's args_json, the
	// form a decision's edited arguments take.
	Args     string `json:"args"`
	ArgsJSON string `json:"args_json"`
	// State is pending, approved, rejected or expired.
	State       string `json:"state"`
	Approver    string `json:"approver,omitempty"`
	DeadlineMs  int64  `json:"deadline_ms"`
	Escalations uint32 `json:"escalations"`
}

// APIDecision is the body of POST /api/approvals/decide, and (with Approver and State) its
// answer.
type APIDecision struct {
	IntentID string `json:"intent_id"`
	// Decision is approve or reject.
	Decision string `json:"decision"`
	Approver string `json:"approver,omitempty"`
	// Note is the approver's note on the decision, signed with it (at most 4 KiB).
	Note string `json:"note,omitempty"`
	// ArgsJSON are arguments the approver edited (an approval only), in the form of the
	// intent's args_json: the gated call runs with them. Signed with the decision.
	ArgsJSON  string `json:"args_json,omitempty"`
	State     string `json:"state,omitempty"`
	EntityKey string `json:"entity_key,omitempty"`
}

// APIEvent is the body of POST /api/events: an entity key and the event's bytes, each as
// text or, for bytes that are not text, base64 (the _base64 member instead).
type APIEvent struct {
	Key        string `json:"key,omitempty"`
	KeyBase64  string `json:"key_base64,omitempty"`
	Body       string `json:"body,omitempty"`
	BodyBase64 string `json:"body_base64,omitempty"`
}

// APISignal is the body of POST /api/signals: named data for a key whose handler awaits it
// (agent.Context.Await). The key and the payload are text or base64, as in APIEvent.
type APISignal struct {
	Key       string `json:"key,omitempty"`
	KeyBase64 string `json:"key_base64,omitempty"`
	// Name is the name the handler awaits.
	Name string `json:"name"`
	// ID deduplicates the signal: a key takes a signal of one id once. Default: a random id.
	ID            string `json:"id,omitempty"`
	Payload       string `json:"payload,omitempty"`
	PayloadBase64 string `json:"payload_base64,omitempty"`
}

// APIAccepted answers POST /api/events and POST /api/signals: the key, the event time the
// event or signal was given, and a signal's id.
type APIAccepted struct {
	Key         string `json:"key"`
	EventTimeMs int64  `json:"event_time_ms"`
	ID          string `json:"id,omitempty"`
}

// apiError is the body of every refusal and failure of the JSON API.
type apiError struct {
	Error struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	} `json:"error"`
}

func (c *server) routeAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/approvals", c.apiApprovals)
	mux.HandleFunc("POST /api/approvals/decide", c.apiDecide)
	mux.HandleFunc("POST /api/events", c.apiEvents)
	mux.HandleFunc("POST /api/signals", c.apiSignals)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		c.apiRefuse(w, http.StatusNotFound, string(CodeRefused), "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
}

func (c *server) apiRefuse(w http.ResponseWriter, status int, code, detail string) {
	var body apiError
	body.Error.Code, body.Error.Detail = code, detail
	c.apiWrite(w, status, body)
}

func (c *server) apiWrite(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiIdentity is the identity of a program's request: its bearer token's user, or the
// proxy's header. Basic auth is not looked at.
func (c *server) apiIdentity(r *http.Request) string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != "" {
		who := ""
		for t, user := range c.o.Tokens {
			if subtle.ConstantTimeCompare([]byte(tok), []byte(t)) == 1 {
				who = user
			}
		}
		return who
	}
	if h := c.o.Identity.ApproverHeader; h != "" {
		return r.Header.Get(h)
	}
	return ""
}

// apiCaller checks a JSON API request: an identity, not cross-site, and for a POST a JSON
// body. It answers the refusal itself.
func (c *server) apiCaller(w http.ResponseWriter, r *http.Request) (string, bool) {
	who := c.apiIdentity(r)
	if who == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="beamagents console"`)
		c.apiRefuse(w, http.StatusUnauthorized, string(CodeRefused), "no identity: send Authorization: Bearer TOKEN"+
			map[bool]string{true: " or the " + c.o.Identity.ApproverHeader + " header", false: ""}[c.o.Identity.ApproverHeader != ""]+
			" (basic auth alone is not accepted here)")
		return "", false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		c.apiRefuse(w, http.StatusForbidden, string(CodeRefused), "cross-site request refused")
		return "", false
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
		c.apiRefuse(w, http.StatusForbidden, string(CodeRefused), "cross-origin request refused")
		return "", false
	}
	if r.Method == http.MethodPost {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			c.apiRefuse(w, http.StatusUnsupportedMediaType, string(CodeInput), "the body must be JSON, sent as Content-Type: application/json")
			return "", false
		}
	}
	return who, true
}

// apiDecode decodes a JSON body strictly into v.
func (c *server) apiDecode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAPIBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), "the body does not decode: "+err.Error())
		return false
	}
	if dec.More() {
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), "the body holds more than one JSON value")
		return false
	}
	return true
}

func (c *server) apiApprovals(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.apiCaller(w, r); !ok {
		return
	}
	if c.o.Approvals == nil {
		c.apiRefuse(w, http.StatusNotFound, string(CodeRefused), "approvals are decided where the effector runs")
		return
	}
	out := []APIApproval{}
	for _, ap := range c.o.Approvals.List() {
		ti := ap.Intent
		st := "pending"
		switch {
		case ap.Decision != "":
			st = ap.Decision
		case ap.Expired:
			st = "expired"
		}
		out = append(out, APIApproval{
			IntentID: ti.GetIntentId(), EntityKey: textOrEmpty(ti.GetEntityKey()), EntityKeyBase64: base64.StdEncoding.EncodeToString(ti.GetEntityKey()),
			Tool: ti.GetToolName(), Args: ap.Args, ArgsJSON: ti.GetArgsJson(), State: st, Approver: ap.Approver, DeadlineMs: ap.DeadlineMs, Escalations: ap.Escalations,
		})
	}
	c.apiWrite(w, http.StatusOK, map[string]any{"approvals": out})
}

func textOrEmpty(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return ""
}

func (c *server) apiDecide(w http.ResponseWriter, r *http.Request) {
	who, ok := c.apiCaller(w, r)
	if !ok {
		return
	}
	if c.o.Approvals == nil {
		c.apiRefuse(w, http.StatusNotFound, string(CodeRefused), "approvals are decided where the effector runs")
		return
	}
	var d APIDecision
	if !c.apiDecode(w, r, &d) {
		return
	}
	var approved bool
	switch d.Decision {
	case "approve":
		approved = true
	case "reject":
	default:
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), `decision must be "approve" or "reject"`)
		return
	}
	if d.IntentID == "" || d.Approver != "" || d.State != "" || d.EntityKey != "" {
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), "send intent_id, decision, and an optional note and args_json only: the approver is the request's identity")
		return
	}
	if len(d.Note) > records.MaxApprovalNoteBytes {
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), fmt.Sprintf("the note is %d bytes; at most %d", len(d.Note), records.MaxApprovalNoteBytes))
		return
	}
	env, err := c.o.Approvals.DecideWith(r.Context(), d.IntentID, effector.Decision{Approved: approved, Approver: who, Note: d.Note, ArgsJSON: d.ArgsJSON})
	if err != nil {
		status := http.StatusInternalServerError
		switch {
		case errors.Is(err, effector.ErrApprovalUnknown):
			status = http.StatusNotFound
		case errors.Is(err, effector.ErrConsole):
			status = http.StatusBadRequest
		case errors.Is(err, effector.ErrApprovalExpired), errors.Is(err, effector.ErrApprovalDecided), errors.Is(err, effector.ErrIntentConflict):
			status = http.StatusConflict
		}
		code := string(CodeRefused)
		var ee *effector.Error
		if errors.As(err, &ee) {
			code = string(ee.Code)
		}
		c.apiRefuse(w, status, code, err.Error())
		return
	}
	c.logAction(who, d.Decision, "approval "+d.IntentID+" (JSON API)")
	state := "rejected"
	if approved {
		state = "approved"
	}
	c.apiWrite(w, http.StatusOK, APIDecision{IntentID: d.IntentID, Decision: d.Decision, Approver: who, State: state, EntityKey: textOrEmpty(env.GetEntityKey())})
}

func (c *server) apiEvents(w http.ResponseWriter, r *http.Request) {
	who, ok := c.apiCaller(w, r)
	if !ok {
		return
	}
	if c.o.Ingest == nil {
		c.apiRefuse(w, http.StatusNotFound, string(CodeRefused), "this console takes no events (beamagents dev does)")
		return
	}
	var ev APIEvent
	if !c.apiDecode(w, r, &ev) {
		return
	}
	key, body, err := ev.Decode()
	if err != nil {
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), err.Error())
		return
	}
	at, err := c.o.Ingest(r.Context(), key, body)
	if err != nil {
		c.apiIngestFailed(w, err)
		return
	}
	c.o.Logger.Debug("console: event accepted", "who", who, "key", keyText(key))
	c.apiWrite(w, http.StatusAccepted, APIAccepted{Key: textOrEmpty(key), EventTimeMs: at})
}

// Decode returns the event's key and body bytes; the key is required.
func (ev APIEvent) Decode() (key, body []byte, err error) {
	key, err = textOrBase64("key", ev.Key, ev.KeyBase64)
	if err == nil && len(key) == 0 {
		err = errors.New("key: required (key or key_base64)")
	}
	if err == nil {
		body, err = textOrBase64("body", ev.Body, ev.BodyBase64)
	}
	return key, body, err
}

func textOrBase64(name, text, b64 string) ([]byte, error) {
	if text != "" && b64 != "" {
		return nil, errors.New(name + " and " + name + "_base64: send one")
	}
	if b64 == "" {
		return []byte(text), nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, errors.New(name + "_base64: not standard base64")
	}
	return b, nil
}

// apiIngestFailed answers an event or a signal dev could not take: 503 while it stops, else
// 500.
func (c *server) apiIngestFailed(w http.ResponseWriter, err error) {
	status, code := http.StatusInternalServerError, string(CodeIngest)
	if errors.Is(err, ErrUnavailable) {
		status, code = http.StatusServiceUnavailable, string(CodeUnavailable)
	}
	c.apiRefuse(w, status, code, err.Error())
}

func (c *server) apiSignals(w http.ResponseWriter, r *http.Request) {
	who, ok := c.apiCaller(w, r)
	if !ok {
		return
	}
	if c.o.Signal == nil {
		c.apiRefuse(w, http.StatusNotFound, string(CodeRefused), "this console takes no signals (beamagents dev does)")
		return
	}
	var s APISignal
	if !c.apiDecode(w, r, &s) {
		return
	}
	sig, err := s.Decode()
	if err != nil {
		c.apiRefuse(w, http.StatusBadRequest, string(CodeInput), err.Error())
		return
	}
	sig.Sender = who
	at, err := c.o.Signal(r.Context(), sig)
	if err != nil {
		c.apiIngestFailed(w, err)
		return
	}
	c.o.Logger.Debug("console: signal accepted", "who", who, "key", keyText(sig.GetEntityKey()), "name", sig.GetName())
	c.apiWrite(w, http.StatusAccepted, APIAccepted{Key: textOrEmpty(sig.GetEntityKey()), EventTimeMs: at, ID: sig.GetSignalId()})
}

// Decode returns the unsigned signal for its key, with a random id when none is given,
// checked as the runtime checks a signal envelope (records.CheckSignal).
func (s APISignal) Decode() (*pb.AgentEnvelope_Signal, error) {
	key, err := textOrBase64("key", s.Key, s.KeyBase64)
	if err == nil && len(key) == 0 {
		err = errors.New("key: required (key or key_base64)")
	}
	if err != nil {
		return nil, err
	}
	payload, err := textOrBase64("payload", s.Payload, s.PayloadBase64)
	if err != nil {
		return nil, err
	}
	sig := &pb.AgentEnvelope_Signal{Name: s.Name, SignalId: s.ID, Payload: payload, EntityKey: key}
	if sig.SignalId == "" {
		sig.SignalId = NewSignalID()
	}
	if err := records.CheckSignal(sig, key); err != nil {
		return nil, err
	}
	return sig, nil
}

// NewSignalID is a random signal id (16 bytes, hex).
func NewSignalID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// SignalFunc takes one signal POSTed to /api/signals (its sender set to the caller) and
// returns the event time it was given. An error matching ErrUnavailable answers 503.
type SignalFunc func(ctx context.Context, sig *pb.AgentEnvelope_Signal) (eventTimeMs int64, err error)

// IngestFunc takes one event POSTed to /api/events and returns the event time it was
// given. An error matching ErrUnavailable (the server is stopping) answers 503.
type IngestFunc func(ctx context.Context, key, body []byte) (eventTimeMs int64, err error)
