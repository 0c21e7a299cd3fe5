package agenttest

import (
	"context"

	"github.com/beamagents/beamagents/model"
)

// ModelFunc is a model written as a Go function: it answers every request the agent makes.
// It must be deterministic in the request for a test to be repeatable; it may be called from
// the goroutine of the input that asks only.
type ModelFunc func(ctx context.Context, req *model.Request) (*model.Response, error)

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return f(ctx, req)
}

// Text is the answer of a ModelFunc that answers with text: a response carrying it.
func Text(text string) *model.Response {
	return &model.Response{Text: []byte(text), FinishReason: "stop"}
}

// Last returns the content of the request's last message: what this call asks (the user's
// message, or the tool result the model is to read), the usual key of a ModelFunc's answer.
func Last(req *model.Request) string {
	if len(req.Messages) == 0 {
		return ""
	}
	return req.Messages[len(req.Messages)-1].Content
}
