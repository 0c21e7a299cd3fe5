package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/limit"
)

// Verdict is what became of one attempt.
type Verdict struct {
	// Err is the attempt's typed error; nil for a success.
	Err *model.Error
	// Retry says another attempt may succeed.
	Retry bool
	// After is the wait the server asked for (Retry-After), 0 if none.
	After time.Duration
	// Kind is what the attempt says about the endpoint, for its breaker and its pause.
	Kind limit.Kind
}

// Stats describes a finished call.
type Stats struct {
	Attempts int
}

// Judger turns an attempt's error into a Verdict.
type Judger func(actx context.Context, err error) Verdict

// Call runs attempt until it succeeds, fails for good, or MaxAttempts are spent. Each attempt
// first passes the Config's Endpoint (its breaker, pause, in-flight cap and rate buckets,
// charged an estimate of tokens) and reports how it ended there; then it gets its own
// deadline (Timeout), and the whole call one more (CallTimeout), which ends it with
// CodeTimeout however many attempts are left. judge turns an attempt's error into a Verdict
// (JudgeSDK builds one from an SDK's error type). An open breaker holds the attempt until a
// probe succeeds (limit.Endpoint.Acquire; with NoHold it refuses at once); its refusal ends
// the call with CodeCircuitOpen. When ctx ends, Call stops at once with CodeCancelled.
func Call(ctx context.Context, c Config, tokens int64, attempt func(context.Context) (*model.Response, error), judge Judger) (*model.Response, Stats, error) {
	c = c.Resolved()
	outer := ctx
	ctx, cancelCall := context.WithTimeout(outer, c.CallTimeout)
	defer cancelCall()
	ended := func(st Stats, err error) error {
		if outer.Err() != nil {
			return &model.Error{Code: model.CodeCancelled, Detail: "the caller's context ended", Err: outer.Err()}
		}
		return typed(model.CodeTimeout, fmt.Sprintf("the call's deadline (%s) passed after %d attempts", c.CallTimeout, st.Attempts), err)
	}
	var st Stats
	spent := 0 // the attempts counted against MaxAttempts: all but failed probes
	for {
		permit, err := admit(ctx, c.Endpoint, tokens, !c.NoHold)
		switch {
		case errors.Is(err, model.ErrCircuitOpen):
			return nil, st, err
		case err != nil:
			return nil, st, ended(st, err)
		}
		st.Attempts++
		actx, cancel := context.WithTimeout(ctx, c.Timeout)
		resp, err := attempt(actx)
		var v Verdict
		if err != nil {
			v = judge(actx, err)
		}
		cancel()
		permit.done(ctx, resp, v, err)
		if !permit.heldProbe() || v.Kind != limit.Unavailable {
			// A failed probe of a call the breaker holds says the endpoint is still down,
			// which the hold already bounds: it does not spend the call's attempts.
			spent++
		}
		switch {
		case err == nil:
			return resp, st, nil
		case ctx.Err() != nil:
			return nil, st, ended(st, ctx.Err())
		case !v.Retry || spent >= c.MaxAttempts:
			if v.Retry {
				v.Err.Detail = fmt.Sprintf("%s (after %d attempts)", v.Err.Detail, st.Attempts)
			}
			return nil, st, v.Err
		}
		if err := limit.Sleep(ctx, delay(c, st.Attempts, v.After)); err != nil {
			return nil, st, ended(st, err)
		}
	}
}

// permit is an attempt's place at its endpoint; nil without one.
type permit struct{ p *limit.Permit }

func admit(ctx context.Context, e *limit.Endpoint, tokens int64, hold bool) (permit, error) {
	switch {
	case e == nil:
		return permit{}, nil
	case !hold:
		p, err := e.AcquireNow(ctx, tokens)
		return permit{p}, err
	}
	p, err := e.Acquire(ctx, tokens)
	return permit{p}, err
}

func (p permit) heldProbe() bool { return p.p != nil && p.p.HeldProbe() }

// done reports the attempt's end to its endpoint: an attempt cut short by the call's own end
// says nothing of the endpoint.
func (p permit) done(ctx context.Context, resp *model.Response, v Verdict, err error) {
	if p.p == nil {
		return
	}
	o := limit.Outcome{Kind: v.Kind, RetryAfter: v.After}
	switch {
	case err == nil:
		o.Kind = limit.Answered
		o.Tokens = resp.Usage.InputTokens + resp.Usage.OutputTokens
	case ctx.Err() != nil || errors.Is(err, model.ErrCancelled):
		o.Kind = limit.Abandoned
	}
	p.p.Done(o)
}

// delay is the wait before attempt n+1: the server's Retry-After when it sent one (bounded by
// MaxBackoff), else exponential backoff with jitter over its upper half.
func delay(c Config, n int, after time.Duration) time.Duration {
	if after > 0 {
		return min(after, c.MaxBackoff)
	}
	d := c.Backoff << min(n-1, 20)
	if d <= 0 || d > c.MaxBackoff {
		d = c.MaxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// Judge classifies the failures every provider shares: an attempt's deadline, a broken
// connection, and an HTTP status (status 0: none was received). detail names the failure
// without anything the server sent back.
func Judge(actx context.Context, err error, status int, header http.Header) Verdict {
	var final *model.Error
	switch {
	case errors.As(err, &final):
		// Already decided by the provider: a refusal, a malformed answer, a caller's cancel, or
		// a stream that failed after delivering text (its decoder cannot take the text again).
		return Verdict{Err: final, Kind: kindOf(final)}
	case status == http.StatusTooManyRequests:
		return Verdict{Err: typed(model.CodeUnavailable, "rate limited (429)", err), Retry: true, After: RetryAfter(header), Kind: limit.RateLimited}
	case status >= 500:
		return Verdict{Err: typed(model.CodeUnavailable, fmt.Sprintf("server error (%d)", status), err), Retry: true, After: RetryAfter(header), Kind: limit.Unavailable}
	case status >= 400:
		return Verdict{Err: typed(model.CodeRejected, fmt.Sprintf("the request was refused (%d)", status), err)}
	case errors.Is(actx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return Verdict{Err: typed(model.CodeTimeout, "the attempt's deadline passed", nil), Retry: true, Kind: limit.Unavailable}
	case connectionFailure(err):
		return Verdict{Err: typed(model.CodeUnavailable, "the connection failed", err), Retry: true, Kind: limit.Unavailable}
	}
	return Verdict{Err: typed(model.CodeMalformed, "the response is not the API's", err)}
}

// kindOf is what a provider's own verdict says of the endpoint: a stream broken after it had
// begun is unavailability, a cancel says nothing, anything else is an answer.
func kindOf(e *model.Error) limit.Kind {
	switch e.Code {
	case model.CodeUnavailable, model.CodeTimeout:
		return limit.Unavailable
	case model.CodeCancelled:
		return limit.Abandoned
	}
	return limit.Answered
}

// JudgeSDK is the Judger of a provider whose SDK reports an HTTP failure as an error of type
// *T: status reads that error's status code and response (nil when none). Every other error
// is judged as having no status: a deadline, a broken connection or a malformed answer.
func JudgeSDK[T any, PT interface {
	*T
	error
}](status func(PT) (int, *http.Response)) Judger {
	return func(actx context.Context, err error) Verdict {
		var apiErr PT
		if !errors.As(err, &apiErr) {
			return Judge(actx, err, 0, nil)
		}
		code, resp := status(apiErr)
		var h http.Header
		if resp != nil {
			h = resp.Header
		}
		return Judge(actx, err, code, h)
	}
}

func connectionFailure(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &oe) || errors.As(err, &ne)
}

// RetryAfter reads the wait a server asks for: retry-after-ms (OpenAI's), else Retry-After in
// seconds. A date is not read (that would need the wall clock); the backoff applies then.
func RetryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	return 0
}

// typed wraps an SDK error. The SDKs' errors carry the request URL and the response body,
// never the request headers, so the key cannot leak through them.
func typed(code model.Code, detail string, err error) *model.Error {
	return &model.Error{Code: code, Detail: detail, Err: err}
}

// Cancelled is the error of a stream the caller cancelled (a refusal found mid-stream, or the
// activation's own context).
func Cancelled(err error) error {
	return &model.Error{Code: model.CodeCancelled, Detail: "stream cancelled by the caller", Err: err}
}

// DeliverWhole makes a plain call through generate and hands the answer's tool calls to
// onDelta, one delta per call: what a provider configured not to stream gives a caller of
// StreamTools. An error of onDelta cancels, as it does mid-stream.
func DeliverWhole(ctx context.Context, req *model.Request, generate func(context.Context, *model.Request) (*model.Response, error), onDelta func(model.ToolDelta) error) (*model.Response, error) {
	resp, err := generate(ctx, req)
	if err != nil {
		return nil, err
	}
	for i, c := range resp.ToolCalls {
		if err := onDelta(model.ToolDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: []byte(c.Arguments)}); err != nil {
			return nil, Cancelled(err)
		}
	}
	return resp, nil
}

// StreamBroke is the error of an attempt whose stream broke off: err as it is while nothing
// of the answer had reached the caller (another attempt may follow), and judged final once
// something had, since another attempt would repeat it.
func StreamBroke(ctx context.Context, judge Judger, err error, begun bool) error {
	if !begun {
		return err
	}
	v := judge(ctx, err)
	v.Err.Detail += " after the stream had begun"
	return v.Err
}

// Typed returns a provider error of code.
func Typed(code model.Code, detail string, err error) *model.Error { return typed(code, detail, err) }
