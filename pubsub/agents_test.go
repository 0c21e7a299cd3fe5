package pubsub_test

import (
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/model"
)

// quickAgent is the support agent with one-second tool and approval deadlines, and a script
// answering any key: a lookup when the event says ORDER-LOOKUP, a reply otherwise (and after
// a tool result).
const quickAgent = "support-quick"

const quickScript = `{"step":0,"contains":"ORDER-LOOKUP","response":{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"A-1"}}}
{"step":0,"contains":"REFUND","response":{"case":"support.refund","fields":{"support.refund.order_id":"A-2","support.refund.amount_cents":100,"support.refund.reason":"broken"}}}
{"response":{"case":"support.reply","fields":{"support.reply.text":"Done."}}}
`

func init() {
	agent.Register(quickAgent, func([]byte) (*agent.Agent, error) {
		schema, err := support.Schema()
		if err != nil {
			return nil, err
		}
		args, err := support.RefundArgs()
		if err != nil {
			return nil, err
		}
		m, err := model.ParseScript([]byte(quickScript))
		if err != nil {
			return nil, err
		}
		return agent.New(agent.Definition{
			Name: quickAgent, Schema: schema, Model: m, ModelID: "quick-1",
			Prompt: agent.DefaultPrompt(support.SystemPrompt), Bindings: support.Bindings(),
			Tools:  map[string]agent.ToolSpec{support.ToolRefund: {Args: args, Agreement: support.RefundAgreement}},
			Limits: agent.Limits{ToolTimeoutMs: 1000, ApprovalTimeoutMs: 1000, MaxEscalations: 2},
		})
	})
}
