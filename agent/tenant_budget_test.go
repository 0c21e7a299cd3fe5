package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/budget"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// echoModel answers with the request's model id and text, at 40 tokens.
type echoModel struct{}

func (echoModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	return &model.Response{Text: []byte(req.Model + ": " + req.Messages[0].Content), Usage: model.Usage{InputTokens: 30, OutputTokens: 10}}, nil
}

func budgetDef(d budget.Degrade) agent.Definition {
	return agent.Definition{Name: "budgeted", Model: echoModel{}, ModelID: "large",
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			turn, err := hc.Chat(agent.Chat{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
			if err != nil {
				return err
			}
			return hc.Reply(turn.Text)
		},
		Limits: agent.Limits{MaxTokens: 100},
		Tenant: func(key string) string { return "acme" },
		Budget: &budget.Budget{Tokens: 1000, Per: time.Hour, Degrade: d},
	}
}

func TestBudgetDefinition(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*agent.Definition)
		want string
	}{
		{"valid", func(*agent.Definition) {}, ""},
		{"no tenant", func(d *agent.Definition) { d.Tenant = nil }, "needs Tenant"},
		{"no MaxTokens", func(d *agent.Definition) { d.Limits.MaxTokens = 0 }, "MaxTokens"},
		{"a window of seconds", func(d *agent.Definition) { d.Budget.Per = 30 * time.Second }, "whole number of minutes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := budgetDef(nil)
			tc.edit(&def)
			_, err := agent.New(def)
			if (err == nil) != (tc.want == "") || (err != nil && (!errors.Is(err, agent.ErrDefinition) || !strings.Contains(err.Error(), tc.want))) {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
}

// stamped is an external event admitted with grant g.
func stamped(g *pb.BudgetGrant) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 3_600_500, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}, BudgetGrant: g}
}

// Each degrade rule on an over-budget activation, and a granted one: what it outputs, the
// grant on its trace, and the same bytes on a second run.
func TestDegradeRules(t *testing.T) {
	granted := &pb.BudgetGrant{Tenant: "acme", WindowStartMs: 3_600_000, WindowMs: 3_600_000, Tokens: 100}
	over := &pb.BudgetGrant{Tenant: "acme", WindowStartMs: 3_600_000, WindowMs: 3_600_000, OverBudget: true}
	for _, tc := range []struct {
		name    string
		degrade budget.Degrade
		grant   *pb.BudgetGrant
		reply   string // the final reply's message; empty: none
		reason  records.Reason
		rule    string // the trace's beam_agents.budget.degrade
	}{
		{"granted", budget.DegradeFail{}, granted, "large: hi", "", ""},
		{"fail", nil, over, "", records.ReasonTenantBudgetSpent, ""},
		{"reply", budget.DegradeReply{Text: "busy"}, over, "busy", "", "reply"},
		{"model", budget.DegradeModel{ModelID: "small"}, over, "small: hi", "", "model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(budgetDef(tc.degrade))
			if err != nil {
				t.Fatal(err)
			}
			run := func() *host.Result {
				res, err := host.Activate(context.Background(), a, host.MapStore{}, stamped(tc.grant), host.Deps{AllowUnsigned: true})
				if !errors.Is(err, &agent.Error{Reason: tc.reason}) && (tc.reason != "" || err != nil) {
					t.Fatalf("Activate: %v, want %q", err, tc.reason)
				}
				return res
			}
			res, again := run(), run()
			if !proto.Equal(&pb.StateSnapshot{Pending: res.Intents}, &pb.StateSnapshot{Pending: again.Intents}) || len(res.Traces) != len(again.Traces) {
				t.Fatal("a second run differs")
			}
			for i := range res.Traces {
				if !proto.Equal(res.Traces[i], again.Traces[i]) {
					t.Fatalf("trace %d differs on a second run", i)
				}
			}
			if tc.reason != "" {
				if len(res.DeadLetters) != 1 || res.DeadLetters[0].GetReason() != string(tc.reason) {
					t.Fatalf("dead letters %v", res.DeadLetters)
				}
				// The dead letter carries the event as it came in, to be redriven.
				env := &pb.AgentEnvelope{}
				if err := proto.Unmarshal(res.DeadLetters[0].GetEnvelope(), env); err != nil || env.GetBudgetGrant() != nil || env.GetEventTimeMs() != 3_600_500 {
					t.Fatalf("dead letter's envelope %v, %v", env, err)
				}
				return
			}
			if len(res.Finals) != 1 || res.Finals[0].GetMessage() != tc.reply {
				t.Fatalf("finals %v, want %q", res.Finals, tc.reply)
			}
			start := res.Traces[0].GetAttributes()
			if start[tracing.AttrBudgetWindow] != "3600000" || start[tracing.AttrBudgetDegrade] != tc.rule ||
				start[tracing.AttrBudgetGranted] != map[bool]string{true: "0", false: "100"}[tc.grant.GetOverBudget()] {
				t.Fatalf("start attributes %v", start)
			}
		})
	}
}
