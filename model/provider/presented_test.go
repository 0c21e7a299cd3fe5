package provider_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

// ledgerArgs are a struct-declared tool's arguments, with a nested record and an integer a
// double cannot hold.
type ledgerArgs struct {
	OrderID string     `json:"order_id" tool:"maxlen=16" desc:"The order to refund."`
	Ledger  uint64     `json:"ledger"`
	Amount  ledgerCash `json:"amount"`
}

type ledgerCash struct {
	Currency string `json:"currency" tool:"maxlen=3"`
	Cents    int64  `json:"cents" tool:"min=1,max=100000"`
}

// A struct-declared tool over each API on loopback, whole and streamed: the request declares
// it by property names with JSON-integer bounds (a dotted name, non-strict schema or unknown
// keyword would be refused as the vendor refuses it), the model's call is read back and
// admitted with 2^53+1 exact in the signed intent, and the follow-up carries the call and its
// result.
func TestPresentedToolThroughTheProvider(t *testing.T) {
	refund, err := tool.Declare[ledgerArgs, map[string]string]("payments.refund", "Refunds an order.")
	if err != nil {
		t.Fatal(err)
	}
	const args = `{"order_id":"A-1","ledger":9007199254740993,"amount":{"currency":"EUR","cents":4599}}`
	const want = `{"payments.refund.args.order_id":"A-1","payments.refund.args.ledger":"9007199254740993","payments.refund.args.amount":{"fields":{"payments.refund.args.amount.currency":"EUR","payments.refund.args.amount.cents":"4599"}}}`
	for _, api := range apis {
		for _, streamed := range []bool{false, true} {
			name := api.name
			if streamed {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				srv, m := start(t, api.name, provider.Config{}, sequence(
					llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: provider.WireName(refund.Name()), Arguments: args}}, ChunkBytes: 7},
					llmtest.Reply{Text: "Refunded."},
				))
				handler := func(hc *agent.Context, tr agent.Trigger) error {
					decls := []agent.ToolDecl{refund.Decl()}
					msgs := []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}
					for range 2 {
						turn, err := hc.Chat(agent.Chat{Messages: msgs, Tools: decls})
						if err != nil || len(turn.Calls) == 0 {
							if err == nil {
								err = hc.Reply(turn.Text)
							}
							return err
						}
						more, err := hc.RunTools(turn, decls)
						if err != nil {
							return err
						}
						msgs = append(msgs, more...)
					}
					return nil
				}
				a, err := agent.New(agent.Definition{Name: "refunds", Handler: handler, Model: m, ModelID: "test-model", Stream: streamed,
					Tools: map[string]agent.ToolDecl{refund.Name(): refund.Decl()}})
				if err != nil {
					t.Fatal(err)
				}
				kr, _ := intent.NewKeyring("k1", map[string][]byte{"k1": bytes.Repeat([]byte{9}, 32)})
				st := host.MapStore{}
				key := []byte("customer-1")
				res, err := host.Activate(context.Background(), a, st, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("refund A-1")}}, host.Deps{Keyring: kr})
				if err != nil {
					t.Fatalf("%v (refusals %v)", err, srv.Refusals())
				}
				st.Apply(res)
				if len(res.Intents) != 1 || res.Intents[0].GetArgsJson() != want {
					t.Fatalf("intents %v", res.Intents)
				}
				if o := intent.Verify(res.Intents[0], kr); o != intent.OK {
					t.Fatalf("intent verifies as %v", o)
				}
				first := string(srv.Requests()[0])
				// Member order is the client's own; the bounds are JSON numbers, exact.
				for _, w := range []string{`"ledger":{`, `"maximum":18446744073709551615`, `"minimum":1`, `"maximum":100000`, `"type":"integer"`, `"description":"The order to refund."`} {
					if !strings.Contains(first, w) {
						t.Errorf("the request lacks %s:\n%s", w, first)
					}
				}
				if strings.Contains(first, "payments.refund.args.order_id") || strings.Contains(first, "payments.refund.args.amount.cents") {
					t.Errorf("the request shows stable ids:\n%s", first)
				}
				res, err = host.Activate(context.Background(), a, st, &pb.AgentEnvelope{EntityKey: key, EventTimeMs: 2000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
					IntentId: res.Intents[0].GetIntentId(), EntityKey: key, Seq: 0, Status: pb.ToolResult_OK, Payload: []byte(`{"ref":"R-1"}`),
				}}}, host.Deps{Keyring: kr})
				if err != nil {
					t.Fatalf("%v (refusals %v)", err, srv.Refusals())
				}
				if len(res.Finals) != 1 || res.Finals[0].GetMessage() != "Refunded." {
					t.Fatalf("finals %v", res.Finals)
				}
				if r := srv.Refusals(); len(r) != 0 || len(srv.Requests()) != 2 {
					t.Fatalf("refused %v of %d requests", r, len(srv.Requests()))
				}
				if !strings.Contains(string(srv.Requests()[1]), "9007199254740993") || !strings.Contains(string(srv.Requests()[1]), "R-1") {
					t.Errorf("the follow-up lacks the call or its result:\n%s", srv.Requests()[1])
				}
			})
		}
	}
}
