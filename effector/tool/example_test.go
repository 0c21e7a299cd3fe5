package tool_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/beamagents/beamagents/effector/tool"
)

// RefundArgs are a tool's arguments, declared in Go: property names, bounds and descriptions
// come from the field tags.
type RefundArgs struct {
	OrderID     string `json:"order_id" tool:"maxlen=32" desc:"The order to refund."`
	AmountCents int64  `json:"amount_cents" tool:"min=1,max=100000"`
	Ledger      uint64 `json:"ledger"`
}

// RefundResult is the tool's payload.
type RefundResult struct {
	Refunded int64 `json:"refunded"`
}

// A tool declared by Go types: the handler writes a typed call, whose canonical arguments an
// intent carries; the effector's implementation gets them back as RefundArgs.
func ExampleDeclare() {
	refund, err := tool.Declare[RefundArgs, RefundResult]("payments.refund", "Refunds an order.")
	if err != nil {
		panic(err)
	}
	fmt.Println(refund.Decl().Args.RootTypeID(), refund.Decl().Args.Presented())

	call, err := refund.Call(RefundArgs{OrderID: "A-1", AmountCents: 4599, Ledger: 1<<53 + 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(call.ArgsJSON)

	impl := refund.Tool(func(_ context.Context, a RefundArgs) (RefundResult, error) {
		return RefundResult{Refunded: a.AmountCents}, nil
	})
	payload, err := impl.Invoke(context.Background(), tool.Call{IntentID: "i-1", Tool: refund.Name(), Args: tool.Present(call.Args)})
	fmt.Println(string(payload), err)

	_, err = refund.Call(RefundArgs{OrderID: "A-1", AmountCents: 0})
	fmt.Println(err != nil)
	// Output:
	// payments.refund.args true
	// {"payments.refund.args.order_id":"A-1","payments.refund.args.amount_cents":"4599","payments.refund.args.ledger":"9007199254740993"}
	// {"refunded":4599} <nil>
	// true
}

// Struct refuses a Go type the closed schema cannot hold, naming the field.
func ExampleStruct() {
	type Rate struct {
		Percent float64 `json:"percent"`
	}
	_, err := tool.Struct[Rate]("rates.args")
	var te *tool.Error
	fmt.Println(errors.As(err, &te), te.Field)
	// Output:
	// true Rate.Percent
}
