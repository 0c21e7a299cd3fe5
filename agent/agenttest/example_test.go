package agenttest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/agenttest"
	"github.com/beamagents/beamagents/model"
)

// A test of a handler agent: the model is a Go function keyed by what it is asked, the tool
// intent is answered by the harness, and the reply is read back. In a test function, pass its
// *testing.T to New.
func Example() {
	t := &testing.T{}
	a, _ := agent.New(agent.Definition{Name: "greeter", ModelID: "m", Handler: func(hc *agent.Context, tr agent.Trigger) error {
		turn, err := hc.Chat(agent.Chat{Messages: []model.Message{{Role: model.RoleUser, Content: string(tr.Event)}}})
		if err != nil {
			return err
		}
		res, err := hc.Tool("crm.lookup", `{"name":"`+turn.Text+`"}`)
		if err != nil {
			return err
		}
		return hc.Reply("hello " + turn.Text + ", " + string(res.GetPayload()))
	}})
	h := agenttest.New(t, a, agenttest.Options{Model: agenttest.ModelFunc(func(_ context.Context, req *model.Request) (*model.Response, error) {
		return agenttest.Text("Ada"), nil // the name in the user's message, as a model would find it
	})})

	h.Send("user-1", []byte("I am Ada"))
	call := h.Intent("user-1", "crm.lookup")
	fmt.Println(call.GetToolName(), call.GetArgsJson())
	h.Answer(call, []byte("a customer since 2019"))
	fmt.Println(h.Replies("user-1"))
	// Output:
	// crm.lookup {"name":"Ada"}
	// [hello Ada, a customer since 2019]
}
