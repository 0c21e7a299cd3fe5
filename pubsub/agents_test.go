package pubsub_test

import (
	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/examples/support"
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
		def, err := support.Definition([]byte(quickScript))
		if err != nil {
			return nil, err
		}
		def.Name, def.ModelID = quickAgent, "quick-1"
		def.Limits = agent.Limits{ToolTimeoutMs: 1000, ApprovalTimeoutMs: 1000, MaxEscalations: 2}
		return bindings.New(def)
	})
}
