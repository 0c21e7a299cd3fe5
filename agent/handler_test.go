package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
)

// testHandlers are the handler agents scenarios name ("handler"); each is built afresh per
// scenario, so a handler may keep state between its runs (the nondeterministic one does).
var testHandlers = map[string]func(tb testing.TB) agent.Handler{
	"propose_tool":     func(testing.TB) agent.Handler { return proposeTool },
	"approval":         func(testing.TB) agent.Handler { return approvalHandler },
	"ring":             func(testing.TB) agent.Handler { return ringHandler },
	"memory":           func(testing.TB) agent.Handler { return memoryHandler },
	"chat_tools":       func(tb testing.TB) agent.Handler { return chatHandler(tb) },
	"nondeterministic": func(testing.TB) agent.Handler { return nondeterministic() },
	"big_journal":      func(testing.TB) agent.Handler { return bigJournal },
	"fail":             func(testing.TB) agent.Handler { return failHandler },
}

func userMessages(tr agent.Trigger, extra ...string) []model.Message {
	msgs := []model.Message{{Role: model.RoleSystem, Content: "You are a support agent."}, {Role: model.RoleUser, Content: string(tr.Event)}}
	for _, e := range extra {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: e})
	}
	return msgs
}

// proposeTool asks for a proposal; a lookup calls the tool and asks again with its result, a
// reply ends the activation with the admitted document.
func proposeTool(hc *agent.Context, tr agent.Trigger) error {
	var extra []string
	for range 3 {
		v, err := hc.Propose(agent.Ask{Messages: userMessages(tr, extra...)})
		if err != nil {
			return err
		}
		if v.CaseID() != "assist.lookup" {
			return hc.ReplyValue(v, nil)
		}
		res, err := hc.Tool("lookup_order", string(v.FieldsJSON()))
		if err != nil {
			return err
		}
		extra = append(extra, "lookup: "+res.GetStatus().String()+" "+string(res.GetPayload()))
	}
	return hc.Fail(records.ReasonBudgetExceeded, "three lookups without an answer")
}

// approvalHandler refunds only above a threshold after an approval, decided in code.
func approvalHandler(hc *agent.Context, tr agent.Trigger) error {
	v, err := hc.Propose(agent.Ask{Messages: userMessages(tr)})
	if err != nil {
		return err
	}
	if v.CaseID() != "assist.refund" {
		return hc.ReplyValue(v, nil)
	}
	amount, _ := v.Lookup("assist.refund.amount")
	if amount.Uint() <= 10 {
		res, err := hc.Tool("refund", string(v.FieldsJSON()))
		if err != nil {
			return err
		}
		return hc.Reply("small refund: " + res.GetStatus().String())
	}
	res, approved, err := hc.Approved("refund", string(v.FieldsJSON()))
	if err != nil {
		return err
	}
	if !approved {
		return hc.Reply("refund denied")
	}
	return hc.Reply("refund " + res.GetStatus().String() + ": " + string(res.GetPayload()))
}

// ringHandler keeps the last three events in a ring and replies once it is full, without a
// model.
func ringHandler(hc *agent.Context, tr agent.Trigger) error {
	if err := hc.Append("events", tr.Event, 3); err != nil {
		return err
	}
	ring, err := hc.Ring("events")
	if err != nil {
		return err
	}
	if len(ring) < 3 {
		return nil
	}
	parts := make([]string, len(ring))
	for i, e := range ring {
		parts[i] = string(e)
	}
	return hc.Reply(strings.Join(parts, "|"))
}

// memoryHandler reads a counter, writes the next value, waits for a tool and replies with
// what it read: the read is journaled, so the resumed run sees the first run's value.
func memoryHandler(hc *agent.Context, tr agent.Trigger) error {
	old, found, err := hc.Get("counter")
	if err != nil {
		return err
	}
	if err := hc.Put("counter", append([]byte("x"), old...)); err != nil {
		return err
	}
	if err := hc.Delete("scratch"); err != nil {
		return err
	}
	if _, err := hc.Tool("audit", `{"note":"counted"}`); err != nil {
		return err
	}
	return hc.Reply(fmt.Sprintf("counter was %q (found %v)", old, found))
}

// chatHandler converses with native tools: an inline lookup and a side-effecting refund,
// until the model answers in text.
func chatHandler(tb testing.TB) agent.Handler {
	lookups := 0
	return func(hc *agent.Context, tr agent.Trigger) error {
		decls := []agent.ToolDecl{
			{Name: "lookup_order", Description: "Looks an order up.", Args: lookupArgsSchema(tb), Inline: func(_ context.Context, args []byte) ([]byte, error) {
				lookups++
				if lookups > 1 {
					return nil, errors.New("the inline tool ran twice")
				}
				if strings.Contains(string(args), "BAD") {
					return nil, errors.New("no such order")
				}
				return []byte(`{"status":"packed"}`), nil
			}},
			{Name: "dispatch", Description: "Dispatches an order.", Args: lookupArgsSchema(tb)},
		}
		msgs := userMessages(tr)
		for range 4 {
			turn, err := hc.Chat(agent.Chat{Messages: msgs, Tools: decls})
			if err != nil {
				return err
			}
			if len(turn.Calls) == 0 {
				return hc.Reply(turn.Text)
			}
			more, err := hc.RunTools(turn, decls)
			if err != nil {
				return err
			}
			msgs = append(msgs, more...)
		}
		return hc.Fail(records.ReasonBudgetExceeded, "four turns without an answer")
	}
}

// nondeterministic calls a tool with arguments that change from one run to the next.
func nondeterministic() agent.Handler {
	runs := 0
	return func(hc *agent.Context, tr agent.Trigger) error {
		runs++
		if _, err := hc.Tool("audit", fmt.Sprintf(`{"run":"%d"}`, runs)); err != nil {
			return err
		}
		return hc.Reply("done")
	}
}

// bigJournal writes and reads back a large memory value, then suspends: its journal (the
// read's result) outgrows the limit.
func bigJournal(hc *agent.Context, tr agent.Trigger) error {
	if err := hc.Put("blob", []byte(strings.Repeat("b", 600))); err != nil {
		return err
	}
	if _, _, err := hc.Get("blob"); err != nil {
		return err
	}
	_, err := hc.Tool("audit", `{}`)
	return err
}

// failHandler fails with a reason of the vocabulary.
func failHandler(hc *agent.Context, tr agent.Trigger) error {
	if err := hc.Put("seen", tr.Event); err != nil {
		return err
	}
	return hc.Fail(records.ReasonProposalRefused, "the event %q is not for this agent", tr.Event)
}
