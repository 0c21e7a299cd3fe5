package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/beamagents/beamagents/effector/tool"
)

// NoteArgs and RefundArgs are the tools' arguments in their own shape.
type NoteArgs struct {
	Key  string `json:"key"`
	Text string `json:"text"`
}

// RefundArgs are payments.refund's arguments.
type RefundArgs struct {
	Key     string `json:"key"`
	OrderID string `json:"order_id"`
}

// Tools are the agent's side-effecting tools, run by the effector (in `dev`, inside the dev
// process). Each is idempotent on its intent id; with REFUNDS_LEDGER set each appends "tool
// NAME INTENT_ID KEY" to that file, so a test can count its runs.
func Tools() ([]tool.Tool, error) {
	noteSchema, refundSchema, err := schemas()
	if err != nil {
		return nil, err
	}
	note, err := tool.Func(ToolNote, noteSchema, func(_ context.Context, c tool.Call, a NoteArgs) (map[string]string, error) {
		ledger("tool %s %s %s", ToolNote, c.IntentID, a.Key)
		return map[string]string{"noted": "yes"}, nil
	})
	if err != nil {
		return nil, err
	}
	refund, err := tool.Func(ToolRefund, refundSchema, func(_ context.Context, c tool.Call, a RefundArgs) (map[string]string, error) {
		ledger("tool %s %s %s", ToolRefund, c.IntentID, a.Key)
		sum := sha256.Sum256([]byte(c.IntentID))
		return map[string]string{"refund_id": "R-" + hex.EncodeToString(sum[:4]), "order_id": a.OrderID}, nil
	})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{note, refund}, nil
}
