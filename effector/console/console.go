package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/beamagents/beamagents/effector"
)

// Options configure the approval console. Exactly one identity source is required.
type Options struct {
	// ApproverHeader names a request header carrying the approver's identity, set by an
	// authenticating proxy in front of the console (for example X-Forwarded-Email).
	ApproverHeader string
	// BasicAuth maps user names to passwords; the approver is the user name.
	BasicAuth map[string]string
}

// New returns the approval console of an effector's approvals: GET / lists the approvals (entity, tool, arguments,
// deadline, escalations, state) with approve and reject buttons; POST /decide records a
// decision as an Approval envelope (Approvals.Decide). A decision needs the approver's
// identity, a same-origin request (Sec-Fetch-Site and Origin, when the browser sends them)
// and the page's CSRF token, which is bound to the approver; anything else is refused with
// 403. Expired approvals show as expired and a decision on one is refused with 409.
func New(a *effector.Approvals, o Options) (http.Handler, error) {
	if (o.ApproverHeader == "") == (len(o.BasicAuth) == 0) {
		return nil, &effector.Error{Code: effector.CodeConfig, Detail: "the console needs exactly one approver identity source: a header or basic-auth users"}
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	c := &console{a: a, o: o, secret: secret}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", c.list)
	mux.HandleFunc("POST /decide", c.decide)
	return mux, nil
}

type console struct {
	a      *effector.Approvals
	o      Options
	secret []byte
}

func (c *console) approver(w http.ResponseWriter, r *http.Request) (string, bool) {
	if c.o.ApproverHeader != "" {
		if id := r.Header.Get(c.o.ApproverHeader); id != "" {
			return id, true
		}
		http.Error(w, "no approver identity (header "+c.o.ApproverHeader+")", http.StatusUnauthorized)
		return "", false
	}
	user, pass, ok := r.BasicAuth()
	want, known := c.o.BasicAuth[user]
	if ok && known && subtle.ConstantTimeCompare([]byte(pass), []byte(want)) == 1 {
		return user, true
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="beamagents approvals"`)
	http.Error(w, "approver credentials required", http.StatusUnauthorized)
	return "", false
}

func (c *console) token(approver string) string {
	m := hmac.New(sha256.New, c.secret)
	m.Write([]byte(approver))
	return hex.EncodeToString(m.Sum(nil))
}

type row struct {
	ID, Entity, Tool, Args, Deadline, State string
	Escalations                             uint32
	Open                                    bool
}

func (c *console) list(w http.ResponseWriter, r *http.Request) {
	who, ok := c.approver(w, r)
	if !ok {
		return
	}
	var rows []row
	for _, ap := range c.a.List() {
		ti := ap.Intent
		st := "pending"
		switch {
		case ap.Decision != "":
			st = ap.Decision + " by " + ap.Approver
		case ap.Expired:
			st = "expired"
		}
		rows = append(rows, row{
			ID: ti.GetIntentId(), Entity: string(ti.GetEntityKey()), Tool: ti.GetToolName(), Args: ap.Args,
			Deadline: time.UnixMilli(ti.GetExpiresAtMs()).UTC().Format(time.RFC3339), State: st,
			Escalations: ap.Escalations, Open: st == "pending",
		})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	pageTmpl.Execute(w, map[string]any{"Approver": who, "Token": c.token(who), "Rows": rows})
}

func (c *console) decide(w http.ResponseWriter, r *http.Request) {
	who, ok := c.approver(w, r)
	if !ok {
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		c.refuse(w, http.StatusForbidden, "cross-site request refused")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "http://"+r.Host && origin != "https://"+r.Host {
		c.refuse(w, http.StatusForbidden, "cross-origin request refused")
		return
	}
	if err := r.ParseForm(); err != nil {
		c.refuse(w, http.StatusBadRequest, "bad form")
		return
	}
	if !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(c.token(who))) {
		c.refuse(w, http.StatusForbidden, "missing or wrong CSRF token")
		return
	}
	var approved bool
	switch r.PostForm.Get("decision") {
	case "approve":
		approved = true
	case "reject":
	default:
		c.refuse(w, http.StatusBadRequest, "decision must be approve or reject")
		return
	}
	_, err := c.a.Decide(r.Context(), r.PostForm.Get("intent_id"), approved, who)
	switch {
	case err == nil:
		http.Redirect(w, r, "/", http.StatusSeeOther)
	case errors.Is(err, effector.ErrApprovalUnknown):
		c.refuse(w, http.StatusNotFound, err.Error())
	case errors.Is(err, effector.ErrApprovalExpired), errors.Is(err, effector.ErrApprovalDecided), errors.Is(err, effector.ErrIntentConflict):
		c.refuse(w, http.StatusConflict, err.Error())
	default:
		c.refuse(w, http.StatusInternalServerError, err.Error())
	}
}

func (c *console) refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	errTmpl.Execute(w, map[string]any{"Status": status, "Message": msg})
}

var errTmpl = template.Must(template.New("err").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Refused</title></head>
<body><h1>Refused ({{.Status}})</h1><p id="error">{{.Message}}</p><p><a href="/">Back to the approvals</a></p></body></html>
`))

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Approvals</title>
<style>
body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:.4em .6em;text-align:left;vertical-align:top}
code{font-size:.85em;word-break:break-all}.expired{color:#a00}.pending{color:#06c}
</style></head>
<body>
<h1>Pending approvals</h1>
<p>Signed in as <b id="approver">{{.Approver}}</b>.</p>
<table id="approvals">
<tr><th>Entity</th><th>Tool</th><th>Arguments</th><th>Deadline (UTC)</th><th>Escalations</th><th>State</th><th>Decision</th></tr>
{{range .Rows}}<tr id="row-{{.ID}}" data-state="{{.State}}">
<td>{{.Entity}}</td><td>{{.Tool}}</td><td><code>{{.Args}}</code></td><td>{{.Deadline}}</td><td>{{.Escalations}}</td>
<td class="state {{if .Open}}pending{{end}}{{if eq .State "expired"}}expired{{end}}">{{.State}}</td>
<td>{{if .Open}}<form method="post" action="/decide">
<input type="hidden" name="intent_id" value="{{.ID}}"><input type="hidden" name="csrf" value="{{$.Token}}">
<button name="decision" value="approve" id="approve-{{.ID}}">Approve</button>
<button name="decision" value="reject" id="reject-{{.ID}}">Reject</button>
</form>{{else}}—{{end}}</td></tr>
{{else}}<tr><td colspan="7">No approvals.</td></tr>{{end}}
</table>
</body></html>
`))
