package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/model"
)

// Name is the agent's registered name.
const Name = "refunds"

// The agent's tools: an inline read-only lookup run in the worker, a note written to the
// ticket system (side-effecting: the effector runs it), and the refund, which a person
// approves first.
const (
	ToolLookup = "orders.lookup"
	ToolNote   = "tickets.note"
	ToolRefund = "payments.refund"
)

// The side-effecting tools' arguments, as the tools themselves declare them (JSON Schema).
const (
	NoteArgsSchema   = `{"type":"object","properties":{"key":{"type":"string","maxLength":64},"text":{"type":"string","maxLength":1024}}}`
	RefundArgsSchema = `{"type":"object","properties":{"key":{"type":"string","maxLength":64},"order_id":{"type":"string","maxLength":32}}}`
)

// SummarySchema is what the model answers: a one-sentence summary (its field's stable id is
// SummaryField). A provider answers {"fields":{"refunds.summary.text":"…"}}.
const (
	SummarySchema = `{"type":"object","properties":{"text":{"type":"string","maxLength":512}}}`
	SummaryField  = "refunds.summary.text"
)

// SystemPrompt instructs the model.
const SystemPrompt = "You handle refund requests for a small shop. Summarize the customer's request and the order in one sentence for the ticket."

func init() {
	agent.Register(Name, New)
	tool.RegisterAgentTools(Name, Tools)
}

func schemas() (note, refund *interaction.Schema, err error) {
	if note, err = tool.FromJSONSchema("tickets.note.args", []byte(NoteArgsSchema)); err != nil {
		return nil, nil, err
	}
	refund, err = tool.FromJSONSchema("payments.refund.args", []byte(RefundArgsSchema))
	return note, refund, err
}

// New is the agent's factory: the model is chosen at launch (--model openai …).
func New([]byte) (*agent.Agent, error) {
	note, refund, err := schemas()
	if err != nil {
		return nil, err
	}
	summary, err := tool.FromJSONSchema("refunds.summary", []byte(SummarySchema))
	if err != nil {
		return nil, err
	}
	return agent.New(agent.Definition{
		Name: Name, Handler: Handle, ModelID: "refunds-1", Schema: summary,
		Tools: map[string]agent.ToolDecl{ToolNote: {Args: note}, ToolRefund: {Args: refund}},
	})
}

// ReturnWindow is how long a return waits for the carrier's scan of the parcel.
const ReturnWindow = 48 * time.Hour

// Handle handles one message of a customer: "refund ORDER" asks for a refund, "return ORDER"
// announces a return, anything else is a question about ORDER (the message's last word). It
// looks the order up (inline), asks the model for a summary, writes it to the ticket; for a
// refund it asks a person to approve it (who may edit its arguments) before the refund is
// issued, and for a return it waits for the carrier's "carrier" signal, at most ReturnWindow.
func Handle(hc *agent.Context, tr agent.Trigger) error {
	key, text := string(tr.EntityKey), strings.TrimSpace(string(tr.Event))
	words := strings.Fields(text)
	order := "unknown"
	if len(words) > 0 {
		order = words[len(words)-1]
	}
	info, err := hc.Inline(ToolLookup, fields("key", key, "order_id", order), Lookup)
	var inlineErr *agent.InlineError
	if errors.As(err, &inlineErr) {
		info = []byte(`{"status":"unknown"}`)
	} else if err != nil {
		return err
	}
	v, err := hc.Propose(agent.Ask{Messages: []model.Message{
		{Role: model.RoleSystem, Content: SystemPrompt},
		{Role: model.RoleUser, Content: text + "\nOrder " + order + ": " + string(info)},
	}})
	if err != nil {
		return err
	}
	var summary map[string]string
	if err := json.Unmarshal(v.FieldsJSON(), &summary); err != nil {
		return err
	}
	said := summary[SummaryField]
	if _, err := hc.Tool(ToolNote, string(fields("tickets.note.args.key", key, "tickets.note.args.text", said))); err != nil {
		return err
	}
	if len(words) > 0 && words[0] == "return" {
		scan, ok, err := hc.AwaitBy("carrier", tr.EventTimeMs+ReturnWindow.Milliseconds())
		if err != nil {
			return err
		}
		if !ok {
			return hc.Reply("no carrier scan of the return of " + order + " within 48 hours")
		}
		return hc.Reply("return of " + order + " scanned: " + string(scan.GetPayload()))
	}
	if len(words) == 0 || words[0] != "refund" {
		return hc.Reply("noted for " + order + ": " + said)
	}
	res, approved, err := hc.Approved(ToolRefund, string(fields("payments.refund.args.key", key, "payments.refund.args.order_id", order)))
	if err != nil {
		return err
	}
	if !approved {
		return hc.Reply("the refund of " + order + " was declined")
	}
	return hc.Reply("refund of " + order + " issued: " + string(res.GetPayload()))
}

// fields is a JSON object of string members, in the order given (the tools' canonical
// order: their property names sorted), without HTML escaping.
func fields(kv ...string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := marshal(kv[i])
		v, _ := marshal(kv[i+1])
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshal(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// Orders is the shop's order book the lookup reads.
var Orders = map[string]string{"A-1": "delivered", "A-2": "shipped", "A-3": "delivered"}

// Lookup is orders.lookup, the inline read-only tool. With REFUNDS_LEDGER set it also
// appends "inline KEY ORDER" to that file, so a test can count its runs.
func Lookup(_ context.Context, args []byte) ([]byte, error) {
	var a struct {
		Key     string `json:"key"`
		OrderID string `json:"order_id"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	ledger("inline %s %s", a.Key, a.OrderID)
	st, ok := Orders[a.OrderID]
	if !ok {
		st = "not_found"
	}
	return json.Marshal(map[string]string{"order_id": a.OrderID, "status": st})
}

// ledger appends one line to $REFUNDS_LEDGER, when set.
func ledger(format string, args ...any) {
	path := os.Getenv("REFUNDS_LEDGER")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, format+"\n", args...)
}
