package support

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/negotiate"
)

func init() { tool.RegisterAgentTools(Name, Tools) }

// LookupArgsSchema is the order service's own declaration of its arguments, as JSON Schema.
const LookupArgsSchema = `{"type":"object","properties":{"order_id":{"type":"string","maxLength":32}},"required":["order_id"]}`

// LookupArgs are orders.lookup's arguments in the tool's own shape.
type LookupArgs struct {
	OrderID string `json:"order_id"`
}

// Order is orders.lookup's result.
type Order struct {
	Status string `json:"status"`
	ETA    string `json:"eta,omitempty"`
}

// orders is the example shop's order book.
var orders = map[string]Order{
	"A-1001": {Status: "shipped", ETA: "Thursday"},
	"A-2002": {Status: "delivered"},
	"A-3003": {Status: "delivered"},
}

// RefundToolArgs are payments.refund's arguments in the tool's own shape.
type RefundToolArgs struct {
	OrderID     string `json:"order_id"`
	AmountCents uint64 `json:"amount_cents"`
	Reason      string `json:"reason"`
}

// Refund is payments.refund's result.
type Refund struct {
	RefundID    string `json:"refund_id"`
	OrderID     string `json:"order_id"`
	AmountCents uint64 `json:"amount_cents"`
}

// Tools are the support agent's tool implementations: deterministic Go functions (the
// refund id is derived from the intent id, so a repeated call is the same refund).
func Tools() ([]tool.Tool, error) {
	lookupSchema, err := tool.FromJSONSchema("orders.lookup.args", []byte(LookupArgsSchema))
	if err != nil {
		return nil, err
	}
	lookup, err := tool.Func(ToolLookupOrder, lookupSchema, func(_ context.Context, _ tool.Call, a LookupArgs) (Order, error) {
		if o, ok := orders[a.OrderID]; ok {
			return o, nil
		}
		return Order{Status: "not_found"}, nil
	})
	if err != nil {
		return nil, err
	}
	refundSchema, err := RefundArgs()
	if err != nil {
		return nil, err
	}
	refund, err := tool.Func(ToolRefund, refundSchema, func(_ context.Context, c tool.Call, a RefundToolArgs) (Refund, error) {
		sum := sha256.Sum256([]byte(c.IntentID))
		return Refund{RefundID: "R-" + hex.EncodeToString(sum[:4]), OrderID: a.OrderID, AmountCents: a.AmountCents}, nil
	})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{
		tool.WithAgreement(lookup, negotiate.Agreement{
			Protocol: negotiate.TransformAll,
			Moves:    map[string]string{"support.lookup_order.order_id": "orders.lookup.args.order_id"},
		}),
		refund,
	}, nil
}
