package tool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/beamagents/beamagents/interaction"
)

// HTTP is a tool served by an HTTP endpoint: each call POSTs the presented arguments as JSON
// to URL with the intent id in the Idempotency-Key header. A 2xx answer's body is the
// payload; a 5xx answer or a transport error is retried (Retries times, with doubling
// backoff from Backoff); any other status fails the call at once.
type HTTP struct {
	ToolName string
	URL      string
	Schema   *interaction.Schema
	// Timeout bounds each attempt; default 10s.
	Timeout time.Duration
	// Retries after the first attempt; default 2, negative for none.
	Retries int
	// Backoff before the first retry; default 100ms.
	Backoff time.Duration
	// Client defaults to a new http.Client.
	Client *http.Client
	// MaxResponseBytes bounds the payload read; default 1 MiB.
	MaxResponseBytes int64
}

// NewHTTP checks h's declaration and returns it as a Tool.
func NewHTTP(h HTTP) (Tool, error) {
	if err := CheckArgs(h.ToolName, h.Schema); err != nil {
		return nil, err
	}
	if h.URL == "" {
		return nil, declErr(h.ToolName, nil, "no URL")
	}
	if h.Timeout == 0 {
		h.Timeout = 10 * time.Second
	}
	if h.Retries == 0 {
		h.Retries = 2
	}
	if h.Backoff == 0 {
		h.Backoff = 100 * time.Millisecond
	}
	if h.Client == nil {
		h.Client = &http.Client{}
	}
	if h.MaxResponseBytes == 0 {
		h.MaxResponseBytes = 1 << 20
	}
	return &h, nil
}

func (h *HTTP) Name() string              { return h.ToolName }
func (h *HTTP) Args() *interaction.Schema { return h.Schema }

// retryable marks an attempt's failure as worth another attempt.
type retryable struct{ error }

func (h *HTTP) Invoke(ctx context.Context, c Call) ([]byte, error) {
	backoff := h.Backoff
	var last error
	for attempt := 0; attempt <= max(h.Retries, 0); attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, &Error{Code: CodeFailed, Tool: h.ToolName, Detail: "cancelled while retrying", Err: last}
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		body, err := h.attempt(ctx, c)
		if err == nil {
			return body, nil
		}
		last = err
		if _, ok := err.(retryable); !ok {
			break
		}
	}
	return nil, &Error{Code: CodeFailed, Tool: h.ToolName, Detail: "POST " + h.URL, Err: unwrapRetry(last)}
}

func unwrapRetry(err error) error {
	if r, ok := err.(retryable); ok {
		return r.error
	}
	return err
}

func (h *HTTP) attempt(ctx context.Context, c Call) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(c.Args))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", c.IntentID)
	resp, err := h.Client.Do(req)
	if err != nil {
		return nil, retryable{err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, h.MaxResponseBytes+1))
	if err != nil {
		return nil, retryable{err}
	}
	switch {
	case resp.StatusCode >= 500:
		return nil, retryable{fmt.Errorf("status %d", resp.StatusCode)}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(body[:min(len(body), 200)]))
	case int64(len(body)) > h.MaxResponseBytes:
		return nil, fmt.Errorf("response over %d bytes", h.MaxResponseBytes)
	}
	return body, nil
}
