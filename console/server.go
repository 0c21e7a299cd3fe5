package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/ledger"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/rehearse"
)

// Identity is where an acting user's identity comes from: exactly one of a header set by an
// authenticating proxy (for example X-Forwarded-Email) or basic-auth users.
type Identity struct {
	ApproverHeader string
	BasicAuth      map[string]string
}

func (i Identity) configured() bool { return i.ApproverHeader != "" || len(i.BasicAuth) > 0 }

// Options configure the console. A zero field leaves its part out: without Store only the
// approvals are served, without Approvals decisions are taken elsewhere, without Redrive
// dead letters are shown but not redriven.
type Options struct {
	Store     *Store
	Approvals *effector.Approvals
	Identity  Identity
	// ReadNeedsIdentity asks every request for an identity, reading included: for a console
	// reachable beyond loopback.
	ReadNeedsIdentity bool
	Redrive           Redrive
	// Logger receives one line per action, with who took it (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock of the action log and of redrive file names (default time.Now).
	Now func() time.Time
	// Hosts are the host names (with or without a port) the console is reached by besides
	// IP addresses and localhost, such as a proxy's; a request for any other is refused.
	Hosts []string
	// Tokens are the bearer tokens programs act with on the JSON API (/api/…), each mapped
	// to the user it acts as: token → user. The JSON API takes a token or the approver
	// header (Identity.ApproverHeader), never basic auth alone (api.go).
	Tokens map[string]string
	// Ingest, when set, takes the events POSTed to /api/events (beamagents dev).
	Ingest IngestFunc
	// Signal, when set, takes the signals POSTed to /api/signals (beamagents dev).
	Signal SignalFunc
	// Shadow, when set, gives the /shadow page the comparisons of a shadow agent with
	// production (shadow.go).
	Shadow ShadowSource
	// Memory, when set, is the long-term memory store the run's handlers recall from and
	// remember to: each entity page lists the key's namespaces and their first entries.
	Memory ltm.Store
	// Prices prices the model calls of the spend page (/spend) as the cost ledger does;
	// without it the page shows tokens and cost 0.
	Prices ledger.Table
	// Rehearsal, when set, is the report of a rehearsal (`beamagents rehearse --report`) the
	// /rehearsal page shows.
	Rehearsal *rehearse.Report
}

// New returns the console's handler.
func New(o Options) (http.Handler, error) {
	switch {
	case o.Store == nil && o.Approvals == nil:
		return nil, &Error{Code: CodeConfig, Detail: "the console needs a store or approvals"}
	case o.Identity.ApproverHeader != "" && len(o.Identity.BasicAuth) > 0:
		return nil, &Error{Code: CodeConfig, Detail: "the console takes one approver identity source: a header or basic-auth users, not both"}
	case (o.Approvals != nil || o.ReadNeedsIdentity) && !o.Identity.configured():
		return nil, &Error{Code: CodeConfig, Detail: "the console needs an approver identity source: a header or basic-auth users"}
	case (o.Ingest != nil || o.Signal != nil) && len(o.Tokens) == 0 && o.Identity.ApproverHeader == "":
		return nil, &Error{Code: CodeConfig, Detail: "taking events needs an identity for programs: bearer tokens or the approver header"}
	}
	for t, user := range o.Tokens {
		if len(t) < 16 || user == "" {
			return nil, &Error{Code: CodeConfig, Detail: "a bearer token needs at least 16 characters and a user"}
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	c := &server{o: o, secret: secret}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /approvals", c.approvals)
	mux.HandleFunc("POST /approvals/decide", c.decide)
	mux.HandleFunc("GET /signin", c.signin)
	mux.HandleFunc("GET /events", c.events)
	c.routeAPI(mux)
	if o.Rehearsal != nil {
		c.rehearsalView = newRehearsalView(o.Rehearsal)
		mux.HandleFunc("GET /rehearsal", c.rehearsal)
	}
	if o.Store != nil {
		mux.HandleFunc("GET /{$}", c.overview)
		mux.HandleFunc("GET /entities/{key}", c.entity)
		mux.HandleFunc("GET /traces/{id}", c.trace)
		mux.HandleFunc("GET /dead_letters", c.deadLetters)
		mux.HandleFunc("POST /dead_letters/redrive", c.redrive)
		mux.HandleFunc("GET /search", c.search)
		mux.HandleFunc("GET /spend", c.spend)
		mux.HandleFunc("GET /canary", c.canary)
		if o.Shadow != nil {
			mux.HandleFunc("GET /shadow", c.shadow)
		}
	} else {
		mux.Handle("GET /{$}", http.RedirectHandler("/approvals", http.StatusSeeOther))
	}
	return hostGuard(mux, o.Hosts), nil
}

type server struct {
	o             Options
	secret        []byte
	rehearsalView *rehearsalView // the report of Options.Rehearsal, ordered for its page
}

// identify returns the request's identity without asking for one.
func (c *server) identify(r *http.Request) string {
	id := c.o.Identity
	if id.ApproverHeader != "" {
		return r.Header.Get(id.ApproverHeader)
	}
	user, pass, ok := r.BasicAuth()
	want, known := id.BasicAuth[user]
	if ok && known && subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1 {
		return user
	}
	return ""
}

// require returns the request's identity, or answers 401 (asking for credentials when the
// source is basic auth).
func (c *server) require(w http.ResponseWriter, r *http.Request) (string, bool) {
	if who := c.identify(r); who != "" {
		return who, true
	}
	id := c.o.Identity
	switch {
	case id.ApproverHeader != "":
		c.refuse(w, r, http.StatusUnauthorized, "no approver identity (header "+id.ApproverHeader+")")
	case len(id.BasicAuth) > 0:
		w.Header().Set("WWW-Authenticate", `Basic realm="beamagents console"`)
		c.refuse(w, r, http.StatusUnauthorized, "approver credentials required")
	default:
		c.refuse(w, r, http.StatusForbidden, "acting needs an approver identity source (--approver_header or --approver_users)")
	}
	return "", false
}

// reader returns the identity of a reading request, which needs one only when configured so.
func (c *server) reader(w http.ResponseWriter, r *http.Request) (string, bool) {
	if c.o.ReadNeedsIdentity {
		return c.require(w, r)
	}
	return c.identify(r), true
}

func (c *server) token(who string) string {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte(who))
	return hex.EncodeToString(m.Sum(nil))
}

// actor checks an acting request: an identity, a same-origin request (Sec-Fetch-Site and
// Origin, when the browser sends them) and the CSRF token bound to that identity.
func (c *server) actor(w http.ResponseWriter, r *http.Request) (string, bool) {
	who, ok := c.require(w, r)
	if !ok {
		return "", false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		c.refuse(w, r, http.StatusForbidden, "cross-site request refused")
		return "", false
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
		c.refuse(w, r, http.StatusForbidden, "cross-origin request refused")
		return "", false
	}
	if err := r.ParseForm(); err != nil {
		c.refuse(w, r, http.StatusBadRequest, "bad form")
		return "", false
	}
	if !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(c.token(who))) {
		c.refuse(w, r, http.StatusForbidden, "missing or wrong CSRF token")
		return "", false
	}
	return who, true
}

// logAction logs an action with who took it, and keeps it in the store.
func (c *server) logAction(who, what, detail string) {
	c.o.Logger.Info("console: "+what, "who", who, "detail", detail)
	if c.o.Store != nil {
		if err := c.o.Store.LogAction(Action{AtMs: c.o.Now().UnixMilli(), Who: who, What: what, Detail: detail}); err != nil {
			c.o.Logger.Warn("console: logging an action", "err", err)
		}
	}
}

// signin asks for the identity, then goes back to the page it came from.
func (c *server) signin(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.require(w, r); !ok {
		return
	}
	http.Redirect(w, r, localPath(r.URL.Query().Get("next")), http.StatusSeeOther)
}

// events streams a message each time the store or the approvals change (server-sent
// events); the pages reload on it.
func (c *server) events(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.reader(w, r); !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	n := 0
	for {
		fmt.Fprintf(w, "data: %d\n\n", n)
		fl.Flush()
		var store, approvals <-chan struct{}
		if c.o.Store != nil {
			store = c.o.Store.Changed()
		}
		if c.o.Approvals != nil {
			approvals = c.o.Approvals.Changed()
		}
		select {
		case <-r.Context().Done():
			return
		case <-store:
		case <-approvals:
		case <-time.After(15 * time.Second):
			fmt.Fprint(w, ": keepalive\n\n")
			continue
		}
		n++
		// Coalesce a burst of commits into one reload.
		select {
		case <-r.Context().Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func keyFromPath(s string) ([]byte, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return b, err == nil
}

// KeyPath is the entity page of key: its bytes as unpadded base64url, those of its stored
// form for a key over MaxKeyBytes, so that a link stays short whatever the key's length.
func KeyPath(key []byte) string {
	return "/entities/" + base64.RawURLEncoding.EncodeToString(storeKey(key))
}

// TracePath is the trace page of a trace id.
func TracePath(traceID []byte) string { return "/traces/" + hex.EncodeToString(traceID) }

// Configured reports whether an identity source is set.
func (i Identity) Configured() bool { return i.configured() }
