package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// admitted asks the model for req's answer (key is its cache key) and admits it under u.
func (act *activation) admitted(req *model.Request, key string, u *schemaUse) (*interaction.Value, error) {
	text, attrs, err := act.ask(req, key, streamed{proposal: u})
	if err != nil {
		return nil, err
	}
	out, err := u.admitter.Admit(text)
	if err != nil {
		return nil, fail(records.ReasonProposalRefused, err, "step %d", req.Step)
	}
	val := out.Value
	out.Receipt.PutAttributes(attrs)
	attrs[tracing.AttrCase] = val.CaseID()
	act.tr.emit(pb.TraceEvent_LLM_CALL, req.Step, act.c.now, attrs)
	return val, nil
}

// ask answers req (whose cache key is key) through the replay cache, calling the model on a
// miss within the activation's budgets, and returns the answer as the cache records it
// (model.CacheBytes) with the LLM_CALL attributes so far. adm is how a streamed answer is
// admitted as it arrives.
func (act *activation) ask(req *model.Request, key string, adm streamed) ([]byte, map[string]string, error) {
	c, a, v := act.c, act.c.a, act.v
	step := req.Step
	if n := model.RequestBytes(req); n > a.limits.MaxRequestBytes {
		return nil, nil, fail(records.ReasonRequestTooLarge, nil, "step %d: the request is %d bytes; the budget is %d", step, n, a.limits.MaxRequestBytes)
	}
	lk, err := v.cache.Lookup(key, c.now)
	if err != nil {
		return nil, nil, fail(records.ReasonStateCorrupt, err, "replay cache lookup")
	}
	v.touch(cacheCell)
	attrs := make(map[string]string, llmCallAttrs)
	attrs[tracing.AttrOperationName] = tracing.OpChat
	attrs[tracing.AttrRequestModel] = req.Model
	attrs[tracing.AttrCache] = lk.Status.String()
	hit := lk.Status == statecodec.Hit
	attrs[tracing.AttrCacheHit] = strconv.FormatBool(hit)
	attrs[tracing.AttrBilled] = strconv.FormatBool(!hit)
	act.putPayer(attrs)
	text, answer := lk.Response, lk.Answer
	if !hit {
		resp, err := act.call(req, adm)
		if err != nil {
			act.traceRefusal(req, err)
			return nil, nil, err
		}
		text = model.CacheBytes(req, resp)
		answer = statecodec.Answer{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens, AnsweredBy: resp.AnsweredBy}
		putResponseAttrs(attrs, resp)
		if lk.Status == statecodec.DigestOnlyHit && !lk.Matches(text) {
			attrs[tracing.AttrDivergence] = "true"
		}
		if _, err := v.cache.StoreAnswer(key, text, answer, c.now); err != nil {
			return nil, nil, fail(records.ReasonStateCorrupt, err, "replay cache store")
		}
	}
	if err := act.charge(step, answer, attrs); err != nil {
		return nil, nil, err
	}
	return text, attrs, nil
}

// traceRefusal records a model call that its endpoint's circuit breaker refused unsent (for
// a fallback chain: the last model asked) as an ERROR event. It is the one trace event an
// attempt that fails keeps beside its dead letter (docs/identity.md), so the activation's
// trace says why no model answered.
func (act *activation) traceRefusal(req *model.Request, err error) {
	if !errors.Is(err, model.ErrCircuitOpen) {
		return
	}
	act.tr.emit(pb.TraceEvent_ERROR, req.Step, act.c.now, map[string]string{
		tracing.AttrErrorType: string(model.CodeCircuitOpen), tracing.AttrReason: string(records.ReasonModelError),
		tracing.AttrOperationName: tracing.OpChat, tracing.AttrRequestModel: req.Model,
	})
}

// appendRefusals appends to dst the events of traces that traceRefusal emitted: what a
// failed attempt keeps of its trace.
func appendRefusals(dst, traces []*pb.TraceEvent) []*pb.TraceEvent {
	for _, ev := range traces {
		if ev.GetEventType() == pb.TraceEvent_ERROR && ev.GetAttributes()[tracing.AttrErrorType] == string(model.CodeCircuitOpen) {
			dst = append(dst, ev)
		}
	}
	return dst
}

// llmCallAttrs bounds the attributes of an LLM_CALL event: five GenAI and cache attributes,
// the tenant and the agent's version, at most eight from the model's response, the token
// count, the receipt's fourteen, the case and the agent. A map made for exactly that many
// never grows.
const llmCallAttrs = 5 + 2 + 8 + 1 + 14 + 2

// putPayer records who pays for a model call, for the cost ledger: the entity key's tenant
// and the agent's version, each only when the agent declares it (Definition.Tenant,
// Definition.Version), so the traces of an agent without them do not change.
func (act *activation) putPayer(attrs map[string]string) {
	a := act.c.a
	if t := a.Tenant(string(act.c.entity)); t != "" {
		attrs[tracing.AttrTenant] = t
	}
	if v := a.def.Version; v != "" {
		attrs[tracing.AttrAgentVersion] = v
	}
}

// putResponseAttrs records what a provider's answer says of itself. Token counts come only
// from a decoded response: a replayed answer has none.
func putResponseAttrs(attrs map[string]string, resp *model.Response) {
	attrs[tracing.AttrInputTokens] = itoa(resp.Usage.InputTokens)
	attrs[tracing.AttrOutputTokens] = itoa(resp.Usage.OutputTokens)
	if n := resp.Usage.CachedInputTokens; n > 0 {
		attrs[tracing.AttrCacheReadInputTokens] = itoa(n)
	}
	if resp.Model != "" {
		attrs[tracing.AttrResponseModel] = resp.Model
	}
	if resp.FinishReason != "" {
		attrs[tracing.AttrResponseFinishReasons] = resp.FinishReason
	}
	if resp.AnsweredBy != "" {
		attrs[tracing.AttrAnsweredBy] = resp.AnsweredBy
	}
	if len(resp.Passed) > 0 {
		attrs[tracing.AttrModelsPassed] = model.FormatPasses(resp.Passed)
	}
}

// charge adds an answer's recorded usage to the activation's tokens (whether the provider or
// the replay cache gave it, so a retried or replayed activation decides the same) and
// refuses the answer when it takes them over the token budget.
func (act *activation) charge(step uint32, a statecodec.Answer, attrs map[string]string) error {
	budget := act.c.a.limits.MaxTokens
	if budget <= 0 {
		return nil
	}
	act.journal.Tokens += a.InputTokens + a.OutputTokens
	if act.journal.Tokens > budget {
		return fail(records.ReasonBudgetExceeded, nil, "step %d: the activation used %d tokens; its token budget (MaxTokens) is %d", step, act.journal.Tokens, budget)
	}
	attrs[tracing.AttrTokens] = itoa(act.journal.Tokens)
	return nil
}

// streamed is how a streamed answer is admitted as it arrives: a proposal by its schema's
// admission, a native-tool answer call by call by the declared tools' argument admissions.
type streamed struct {
	proposal *schemaUse
	tools    map[string]*schemaUse
}

// call makes one model call within the activation's budget.
func (act *activation) call(req *model.Request, adm streamed) (*model.Response, error) {
	c, a := act.c, act.c.a
	if act.journal.ModelCalls >= a.limits.MaxModelCalls {
		return nil, fail(records.ReasonBudgetExceeded, nil, "activation reached its %d-call model budget", a.limits.MaxModelCalls)
	}
	act.journal.ModelCalls++
	c.res.ModelCalls++
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if a.def.Model == nil {
		return nil, fail(records.ReasonModelError, nil, "step %d: the agent has no model", req.Step)
	}
	if s, ok := a.def.Model.(model.ToolStreamer); ok && a.def.Stream && len(req.Tools) > 0 {
		return act.streamTools(ctx, s, req, adm.tools)
	}
	if s, ok := a.def.Model.(model.Streamer); ok && a.def.Stream && len(req.Tools) == 0 {
		return act.stream(ctx, s, req, adm.proposal)
	}
	resp, err := a.def.Model.Generate(ctx, req)
	if err != nil {
		return nil, fail(records.ReasonModelError, err, "step %d", req.Step)
	}
	return resp, nil
}

// stream makes a streaming model call. Every chunk is pushed to the admitter's push-style
// admission and the call is cancelled at its first refusal, which fails the activation as
// proposal_refused with the STREAM-* refusal; the accepted text is still admitted as a whole
// by the caller.
func (act *activation) stream(ctx context.Context, s model.Streamer, req *model.Request, u *schemaUse) (*model.Response, error) {
	var st *negotiate.Stream
	push := func([]byte) error { return nil }
	if u != nil && u.streams {
		st, _ = u.admitter.NewStream() // u streams only if it can
		push = st.Push
	}
	resp, err := s.Stream(ctx, req, push)
	var refusal *stream.Refusal
	switch {
	case errors.As(err, &refusal):
		return nil, fail(records.ReasonProposalRefused, refusal, "step %d: stream cancelled after %d bytes", req.Step, st.Buffered())
	case err != nil:
		return nil, fail(records.ReasonModelError, err, "step %d", req.Step)
	}
	return resp, nil
}

// streamTools makes a streaming model call with native tools. Each call's argument deltas are
// pushed, behind the record prefix {"fields": that the whole-call admission adds too, to the
// push-style admission of its tool's argument schema, and the call is cancelled at the first
// refused byte (or at the first delta of a call of an undeclared tool), which fails the
// activation as proposal_refused; a tool whose schema cannot be streamed is admitted once
// complete. The answer is still admitted whole, turn by turn, by the caller.
func (act *activation) streamTools(ctx context.Context, s model.ToolStreamer, req *model.Request, uses map[string]*schemaUse) (*model.Response, error) {
	type callStream struct {
		st   *negotiate.Stream // nil: admitted once complete
		name string
	}
	calls := map[int]*callStream{}
	var refused error
	onDelta := func(d model.ToolDelta) error {
		cs, ok := calls[d.Index]
		if !ok {
			u, declared := uses[d.Name]
			if !declared {
				refused = fmt.Errorf("tool call %d names the undeclared tool %q", d.Index, d.Name)
				return refused
			}
			cs = &callStream{name: d.Name}
			// Arguments by property names (a presented schema) are read back once complete.
			if st, err := u.admitter.NewStream(); err == nil && !u.schema.Presented() {
				cs.st = st
				cs.st.Push([]byte(`{"fields":`)) // the prefix alone is never refused
			}
			calls[d.Index] = cs
		}
		if cs.st == nil {
			return nil
		}
		if err := cs.st.Push(d.Arguments); err != nil {
			refused = fmt.Errorf("arguments of tool call %d (%s), cancelled after %d bytes: %w", d.Index, cs.name, cs.st.Buffered(), err)
			return refused
		}
		return nil
	}
	resp, err := s.StreamTools(ctx, req, onDelta)
	switch {
	case refused != nil:
		return nil, fail(records.ReasonProposalRefused, refused, "step %d", req.Step)
	case err != nil:
		return nil, fail(records.ReasonModelError, err, "step %d", req.Step)
	}
	return resp, nil
}
