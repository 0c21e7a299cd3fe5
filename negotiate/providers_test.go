package negotiate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/anthropic"
	"github.com/beamagents/beamagents/model/openai"
	"github.com/beamagents/beamagents/model/provider"
	"github.com/beamagents/beamagents/negotiate"
)

// Prefixes of proposals up to a field's value, declared members in declaration order.
const (
	replyText   = `{"case":"assist.reply","fields":{"assist.reply.text":`
	replyFinal  = `{"case":"assist.reply","fields":{"assist.reply.text":"hi","assist.reply.final":`
	lookupLimit = `{"case":"assist.lookup","fields":{"assist.lookup.order_id":"A1","assist.lookup.limit":`
	refundHead  = `{"case":"assist.refund","fields":{"assist.refund.order_id":"A1","assist.refund.amount_minor":100,` +
		`"assist.refund.ledger_delta":-5,"assist.refund.priority":0,"assist.refund.receipt":`
	refundTotal  = refundHead + `[1,2],"assist.refund.total":`
	refundNotify = refundTotal + `{"fields":{"assist.money.currency":"EUR","assist.money.minor_units":9}},"assist.refund.notify":`
)

// mismatches are values of another JSON type than their field's (or of no integer's form
// where an integer is declared), each after a prefix the stream admits.
var mismatches = []struct{ name, prefix, value string }{
	{"number for a string", replyText, `12345`},
	{"negative number for a string", replyText, `-1`},
	{"object for a string", replyText, `{"text":"hi"}`},
	{"array for a string", replyText, `["hi"]`},
	{"bool for a string", replyText, `true`},
	{"null for a string", replyText, `null`},
	{"string for a bool", replyFinal, `"true"`},
	{"number for a bool", replyFinal, `1`},
	{"object for a bool", replyFinal, `{}`},
	{"array for a bool", replyFinal, `[true]`},
	{"bool for an integer", lookupLimit, `true`},
	{"object for an integer", lookupLimit, `{"value":5}`},
	{"array for an integer", lookupLimit, `[5]`},
	{"null for an integer", lookupLimit, `null`},
	{"word for an integer", lookupLimit, `"ten"`},
	{"fraction for an integer", lookupLimit, `1.5`},
	{"string for bytes", refundHead, `"AQI="`},
	{"number for bytes", refundHead, `7`},
	{"number for a record", refundTotal, `5`},
	{"string for a record", refundTotal, `"EUR 5"`},
	{"array for a variant", refundNotify, `[]`},
	{"number for a case", `{"case":`, `12`},
}

// streamingAPIs are the two hosted providers, with the events their servers send before the
// first answer delta (OpenAI: the role chunk; Anthropic: message_start and
// content_block_start).
var streamingAPIs = []struct {
	name    string
	leading int
	new     func(provider.Config) (model.Streamer, error)
}{
	{llmtest.OpenAI, 1, func(c provider.Config) (model.Streamer, error) { return openai.New(c) }},
	{llmtest.Anthropic, 2, func(c provider.Config) (model.Streamer, error) { return anthropic.New(c) }},
}

// TestMismatchCancelsEachProvider streams each mismatch through both providers' streaming
// paths against loopback servers: the prefix in one event, the value in the next, then 200
// more. The call must be cancelled in the value's event, so the server, which paces its events
// by the client's acknowledgements, sends at most one event after it.
func TestMismatchCancelsEachProvider(t *testing.T) {
	s := proposalSchema(t)
	adm := streamAdmitter(t, s, negotiate.TransformAll)
	const filler = 200
	for _, api := range streamingAPIs {
		for _, mm := range mismatches {
			t.Run(api.name+"/"+mm.name, func(t *testing.T) {
				chunks := append([]string{mm.prefix, mm.value}, slices.Repeat([]string{" "}, filler)...)
				chunks = append(chunks, "}}")
				text := strings.Join(chunks, "")
				if _, err := negotiate.Canonicalize(s, []byte(text)); !errors.Is(err, negotiate.ErrCanonicalize) {
					t.Fatalf("the whole reading does not refuse %q: %v", text, err)
				}
				srv := llmtest.New(api.name, func(int, []byte) llmtest.Reply { return llmtest.Reply{Chunks: chunks} })
				t.Cleanup(srv.Close)
				srv.Step = make(chan struct{}, len(chunks))
				t.Setenv("BEAMAGENTS_TEST_KEY", "sk-test-negotiate")
				m, err := api.new(provider.Config{BaseURL: srv.BaseURL(), APIKey: "env:BEAMAGENTS_TEST_KEY", Model: "test-model",
					Backoff: time.Millisecond, MaxBackoff: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				st, err := adm.NewStream()
				if err != nil {
					t.Fatal(err)
				}
				delivered := 0
				_, err = m.Stream(context.Background(), &model.Request{Model: "test-model", ResponseSchema: s.ProviderJSONSchema(),
					SchemaDigest: s.Digest(), Messages: []model.Message{{Role: model.RoleUser, Content: "?"}}}, func(c []byte) error {
					delivered++
					if err := st.Push(c); err != nil {
						return err
					}
					srv.Step <- struct{}{}
					return nil
				})
				var r *stream.Refusal
				if !errors.Is(err, model.ErrCancelled) || !errors.As(err, &r) || !slices.Contains(stream.Codes(), r.Code) {
					t.Fatalf("err %v; want a cancel carrying a STREAM-* refusal", err)
				}
				if delivered != 2 {
					t.Fatalf("refused in answer event %d; the refused byte is in event 2", delivered)
				}
				ob := observed(t, srv)
				after := ob.Events - (api.leading + delivered)
				if !ob.Disconnected || after > 1 {
					t.Fatalf("the server sent %d events after the refused one (%d of %d in all; disconnected %v)",
						after, ob.Events, ob.TotalEvents, ob.Disconnected)
				}
				t.Logf("refused in answer event %d; the server sent %d events after it, %d of %d in all", delivered, after, ob.Events, ob.TotalEvents)
				if n := len(srv.Requests()); n != 1 {
					t.Fatalf("%d requests: a refusal is never retried", n)
				}
			})
		}
	}
}

// observed waits for the server's handler to record what it sent.
func observed(t *testing.T, srv *llmtest.Server) llmtest.Observation {
	t.Helper()
	for range 1000 {
		if obs := srv.Observations(); len(obs) > 0 && (obs[0].Disconnected || obs[0].TotalEvents > 0 && obs[0].Events == obs[0].TotalEvents) {
			return obs[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server never finished the response")
	return llmtest.Observation{}
}
