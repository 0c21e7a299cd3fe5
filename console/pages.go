package console

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/ledger"
)

// page is what every template gets.
type page struct {
	Title    string
	Nonce    string
	Who      string
	Token    string // the CSRF token of Who, when there is one
	CanAct   bool   // an identity source is configured
	HasStore bool
	// HasRehearsal says the console shows a rehearsal's report (/rehearsal).
	HasRehearsal bool
	Path         string
	Data         any
}

// render writes a page. Pages allow no script but the page's own (a nonce), no foreign
// form target and no framing.
func (c *server) render(w http.ResponseWriter, r *http.Request, status int, name, title, who string, data any) {
	nonce := make([]byte, 16)
	rand.Read(nonce)
	p := page{Title: title, Nonce: base64.RawStdEncoding.EncodeToString(nonce), Who: who, CanAct: c.o.Identity.configured(),
		HasStore: c.o.Store != nil, HasRehearsal: c.o.Rehearsal != nil, Path: r.URL.RequestURI(), Data: data}
	if who != "" {
		p.Token = c.token(who)
	}
	var buf bytes.Buffer
	if err := templates[name].Execute(&buf, p); err != nil {
		c.o.Logger.Error("console: rendering", "page", name, "err", err)
		http.Error(w, "rendering failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-"+p.Nonce+"'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (c *server) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.render(w, r, status, "error", "Refused", "", map[string]any{"Status": status, "Message": msg})
}

func (c *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	c.o.Logger.Error("console: store", "err", err)
	c.refuse(w, r, http.StatusInternalServerError, err.Error())
}

func (c *server) overview(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	o, err := c.o.Store.Overview()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, 200, "overview", "Overview", who, map[string]any{"O": o, "Series": chart(o.Minutes)})
}

func (c *server) entity(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	key, ok := keyFromPath(r.PathValue("key"))
	if !ok {
		c.refuse(w, r, http.StatusBadRequest, "an entity key in a path is unpadded base64url")
		return
	}
	e, err := c.o.Store.entity(pathKey(key), key)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if c.o.Memory != nil {
		e.LongTerm = longTerm(r.Context(), c.o.Memory, e.Key)
	}
	status := 200
	if !e.Known && (e.LongTerm == nil || len(e.LongTerm.Namespaces) == 0) {
		status = http.StatusNotFound
	}
	c.render(w, r, status, "entity", "Entity "+keyText(e.Key), who, e)
}

func (c *server) trace(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	id, err := hex.DecodeString(r.PathValue("id"))
	if err != nil || len(id) != 16 {
		c.refuse(w, r, http.StatusBadRequest, "a trace id is 32 hexadecimal digits")
		return
	}
	evs, err := c.o.Store.Trace(id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	status := 200
	if len(evs) == 0 {
		status = http.StatusNotFound
	}
	c.render(w, r, status, "trace", "Trace "+hex.EncodeToString(id), who, Layout(id, evs))
}

func (c *server) deadLetters(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	groups, err := c.o.Store.DeadLetters()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, 200, "dead_letters", "Dead letters", who, map[string]any{
		"Groups": groups, "Redrive": c.o.Redrive.enabled(), "Actions": c.o.Store.Actions(20),
	})
}

func (c *server) redrive(w http.ResponseWriter, r *http.Request) {
	who, ok := c.actor(w, r)
	if !ok {
		return
	}
	if !c.o.Redrive.enabled() {
		c.refuse(w, r, http.StatusForbidden, "this console has no redrive target (--redrive_dir or --redrive_topic)")
		return
	}
	var ids [][]byte
	for _, s := range r.PostForm["id"] {
		id, err := hex.DecodeString(s)
		if err != nil || len(id) != 16 {
			c.refuse(w, r, http.StatusBadRequest, "a dead letter id is 32 hexadecimal digits")
			return
		}
		ids = append(ids, id)
	}
	reasons := r.PostForm["reason"]
	if len(ids) == 0 && len(reasons) == 0 {
		c.refuse(w, r, http.StatusBadRequest, "choose dead letters to redrive")
		return
	}
	dls, err := c.o.Store.DeadLettersOf(ids, reasons)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	var envs []*pb.AgentEnvelope
	for _, d := range dls {
		if env, err := RedriveEnvelope(d.Record); err == nil {
			envs = append(envs, env)
		}
	}
	if len(envs) == 0 {
		c.refuse(w, r, http.StatusBadRequest, "none of the chosen dead letters carries an envelope")
		return
	}
	where, err := c.o.Redrive.send(r.Context(), envs, c.o.Now())
	if err != nil {
		c.refuse(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	detail := strconv.Itoa(len(envs)) + " envelopes of " + strconv.Itoa(len(dls)) + " dead letters to " + where
	c.logAction(who, "redrive", detail)
	c.render(w, r, 200, "redriven", "Redriven", who, map[string]any{"Envelopes": len(envs), "Chosen": len(dls), "Where": where})
}

// search finds a trace id, an intent id or an entity key (as text or unpadded base64url).
func (c *server) search(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if id, err := hex.DecodeString(q); err == nil && len(id) == 16 && c.o.Store.HasTrace(id) {
		http.Redirect(w, r, TracePath(id), http.StatusSeeOther)
		return
	}
	ti, err := c.o.Store.Intent(q)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if q != "" && ti != nil {
		if len(ti.GetTraceId()) == 16 && c.o.Store.HasTrace(ti.GetTraceId()) {
			http.Redirect(w, r, TracePath(ti.GetTraceId()), http.StatusSeeOther)
		} else {
			http.Redirect(w, r, KeyPath(ti.GetEntityKey()), http.StatusSeeOther)
		}
		return
	}
	var keys [][]byte
	if q != "" {
		keys = c.o.Store.KeysWithPrefix([]byte(q), 50)
		if b, err := base64.RawURLEncoding.DecodeString(q); err == nil {
			keys = append(keys, c.o.Store.KeysWithPrefix(b, 50)...)
		}
	}
	for _, k := range keys {
		if string(k) == q {
			http.Redirect(w, r, KeyPath(k), http.StatusSeeOther)
			return
		}
	}
	c.render(w, r, 200, "search", "Search", who, map[string]any{"Q": q, "Keys": keys})
}

// approvalRow is one approval as the approvals page lists it.
type approvalRow struct {
	ID, Tool, Args, Deadline, State string
	Entity                          []byte
	Escalations                     uint32
	Open                            bool
}

func (c *server) approvals(w http.ResponseWriter, r *http.Request) {
	who, ok := c.reader(w, r)
	if !ok {
		return
	}
	data := map[string]any{"Here": c.o.Approvals != nil}
	if c.o.Approvals == nil {
		o, err := c.o.Store.Overview()
		if err != nil {
			c.fail(w, r, err)
			return
		}
		var waiting []Suspended
		for _, sp := range o.Suspended {
			if sp.Intent.GetKind() == pb.ToolIntent_APPROVAL {
				waiting = append(waiting, sp)
			}
		}
		data["Waiting"] = waiting
		c.render(w, r, 200, "approvals", "Approvals", who, data)
		return
	}
	var rows []approvalRow
	for _, ap := range c.o.Approvals.List() {
		ti := ap.Intent
		st := "pending"
		switch {
		case ap.Decision != "":
			st = ap.Decision + " by " + ap.Approver
		case ap.Expired:
			st = "expired"
		}
		rows = append(rows, approvalRow{
			ID: ti.GetIntentId(), Entity: ti.GetEntityKey(), Tool: ti.GetToolName(), Args: ap.Args,
			Deadline: time.UnixMilli(ap.DeadlineMs).UTC().Format(time.RFC3339), State: st,
			Escalations: ap.Escalations, Open: st == "pending",
		})
	}
	data["Rows"] = rows
	c.render(w, r, 200, "approvals", "Approvals", who, data)
}

func (c *server) decide(w http.ResponseWriter, r *http.Request) {
	who, ok := c.actor(w, r)
	if !ok {
		return
	}
	if c.o.Approvals == nil {
		c.refuse(w, r, http.StatusNotFound, "approvals are decided where the effector runs (beamagents effector --console)")
		return
	}
	var approved bool
	switch r.PostForm.Get("decision") {
	case "approve":
		approved = true
	case "reject":
	default:
		c.refuse(w, r, http.StatusBadRequest, "decision must be approve or reject")
		return
	}
	id := r.PostForm.Get("intent_id")
	_, err := c.o.Approvals.Decide(r.Context(), id, approved, who, "")
	switch {
	case err == nil:
		c.logAction(who, r.PostForm.Get("decision"), "approval "+id)
		http.Redirect(w, r, "/approvals", http.StatusSeeOther)
	case errors.Is(err, effector.ErrApprovalUnknown):
		c.refuse(w, r, http.StatusNotFound, err.Error())
	case errors.Is(err, effector.ErrApprovalExpired), errors.Is(err, effector.ErrApprovalDecided), errors.Is(err, effector.ErrIntentConflict):
		c.refuse(w, r, http.StatusConflict, err.Error())
	default:
		c.refuse(w, r, http.StatusInternalServerError, err.Error())
	}
}

// maxShown bounds a value shown in a cell; the rest is cut with a mark.
const maxShown = 4096

// keyText shows a key: itself when it is printable UTF-8, else Go-quoted (escapes for
// invalid bytes and control characters).
func keyText(k []byte) string {
	s := string(k)
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return cut(s, 256)
	}
	return cut(strconv.Quote(s), 256)
}

// text makes s safe to show: valid UTF-8, cut at maxShown bytes.
func text(s string) string { return cut(strings.ToValidUTF8(s, "\uFFFD"), maxShown) }

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// inputText shows what a dead letter carries: its envelope as protojson, a raw record as
// text (quoted when not UTF-8), or nothing.
func inputText(d *pb.ActivationErrorRecord) string {
	switch in := d.GetFailedInput().(type) {
	case *pb.ActivationErrorRecord_Envelope:
		env := &pb.AgentEnvelope{}
		if err := protoUnmarshal(in.Envelope, env); err == nil {
			if b, err := protojson.Marshal(env); err == nil {
				return text(string(b))
			}
		}
		return "envelope (undecodable): " + cut(strconv.Quote(string(in.Envelope)), maxShown)
	case *pb.ActivationErrorRecord_RawRecord:
		if utf8.Valid(in.RawRecord) {
			return "raw record: " + text(string(in.RawRecord))
		}
		return "raw record: " + cut(strconv.Quote(string(in.RawRecord)), maxShown)
	}
	return ""
}

var funcs = template.FuncMap{
	"key":        keyText,
	"keyPath":    KeyPath,
	"tracePath":  TracePath,
	"text":       text,
	"time":       fmtTime,
	"hex":        hex.EncodeToString,
	"input":      inputText,
	"redrivable": func(d *pb.ActivationErrorRecord) bool { _, err := RedriveEnvelope(d); return err == nil },
	"pct":        func(f float64) string { return strconv.FormatFloat(f, 'f', 4, 64) },
	"num":        func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"memValue":   func(b []byte) string { return text(string(b)) },
	"final":      finalText,
	"add":        func(a, b int) int { return a + b },
	"money":      ledger.FormatMicros,
	"spendTables": func(s *Spend) []spendTable {
		return []spendTable{{"tenant", "Tenant", s.ByTenant}, {"agent", "Agent", s.ByAgent}, {"model", "Model", s.ByModel},
			{"entity", "Entity", s.ByEntity}, {"hour", "Hour", s.Hours}}
	},
}

// spendTable is one table of the spend page.
type spendTable struct {
	ID, Title string
	Rows      []SpendRow
}

// finalText is a final reply's message, shown as text.
func finalText(f *pb.FinalReply) string { return text(f.GetMessage()) }
