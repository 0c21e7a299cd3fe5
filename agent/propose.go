package agent

import (
	"context"
	"errors"
	"strconv"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/interaction/stream"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// propose asks the model (through the replay cache) for the step's proposal and admits it.
func (act *activation) propose(step uint32) (*interaction.Value, error) {
	c, a, v := act.c, act.c.a, act.v
	req := &model.Request{
		Model:          a.def.ModelID,
		Messages:       a.prompt(act.promptInput(step)),
		ResponseSchema: a.providerSchema,
		SchemaDigest:   a.def.Schema.Digest(),
		Sampling:       a.def.Sampling,
		EntityKey:      c.entity,
		Seq:            act.seq,
		Step:           step,
	}
	if n := model.RequestBytes(req); n > a.limits.MaxRequestBytes {
		return nil, fail(ReasonRequestTooLarge, nil, "step %d: the request is %d bytes; the budget is %d", step, n, a.limits.MaxRequestBytes)
	}
	key := model.CacheKey(req)
	lk, err := v.cache.Lookup(key, c.now)
	if err != nil {
		return nil, fail(ReasonStateCorrupt, err, "replay cache lookup")
	}
	v.touch(cacheCell)
	attrs := make(map[string]string, llmCallAttrs)
	attrs[tracing.AttrOperationName] = tracing.OpChat
	attrs[tracing.AttrRequestModel] = a.def.ModelID
	attrs[tracing.AttrCache] = lk.Status.String()
	hit := lk.Status == statecodec.Hit
	attrs[tracing.AttrCacheHit] = strconv.FormatBool(hit)
	attrs[tracing.AttrBilled] = strconv.FormatBool(!hit)
	text := lk.Response
	if !hit {
		resp, err := act.call(req)
		if err != nil {
			return nil, err
		}
		text = resp.Text
		// Token counts only from a decoded response: a replayed answer has none.
		attrs[tracing.AttrInputTokens] = itoa(resp.Usage.InputTokens)
		attrs[tracing.AttrOutputTokens] = itoa(resp.Usage.OutputTokens)
		if resp.Model != "" {
			attrs[tracing.AttrResponseModel] = resp.Model
		}
		if resp.FinishReason != "" {
			attrs[tracing.AttrResponseFinishReasons] = resp.FinishReason
		}
		if lk.Status == statecodec.DigestOnlyHit && !lk.Matches(text) {
			attrs[tracing.AttrDivergence] = "true"
		}
		if _, err := v.cache.Store(key, text, c.now); err != nil {
			return nil, fail(ReasonStateCorrupt, err, "replay cache store")
		}
	}
	out, err := a.admitter.Admit(text)
	if err != nil {
		return nil, fail(ReasonProposalRefused, err, "step %d", step)
	}
	val := out.Value
	out.Receipt.PutAttributes(attrs)
	attrs[tracing.AttrCase] = val.CaseID()
	act.tr.emit(pb.TraceEvent_LLM_CALL, step, c.now, attrs)
	return val, nil
}

// llmCallAttrs bounds the attributes of an LLM_CALL event: five GenAI and cache attributes,
// at most five from the model's response, the receipt's fourteen, the case and the agent. A
// map made for exactly that many never grows, and is half the size of one made for 32.
const llmCallAttrs = 5 + 5 + 14 + 2

// call makes one model call within the activation's budget.
func (act *activation) call(req *model.Request) (*model.Response, error) {
	c, a := act.c, act.c.a
	if act.resume.ModelCalls >= a.limits.MaxModelCalls {
		return nil, fail(ReasonBudgetExceeded, nil, "activation reached its %d-call model budget", a.limits.MaxModelCalls)
	}
	act.resume.ModelCalls++
	c.res.ModelCalls++
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if s, ok := a.def.Model.(model.Streamer); ok && a.def.Stream {
		return act.stream(ctx, s, req)
	}
	resp, err := a.def.Model.Generate(ctx, req)
	if err != nil {
		return nil, fail(ReasonModelError, err, "step %d", req.Step)
	}
	return resp, nil
}

// stream makes a streaming model call. Every chunk is pushed to the admitter's push-style
// admission and the call is cancelled at its first refusal, which fails the activation as
// proposal_refused with the STREAM-* refusal; the accepted text is still admitted as a whole
// by the caller.
func (act *activation) stream(ctx context.Context, s model.Streamer, req *model.Request) (*model.Response, error) {
	var st *negotiate.Stream
	push := func([]byte) error { return nil }
	if act.c.a.streams {
		st, _ = act.c.a.admitter.NewStream() // the agent was built only if it can
		push = st.Push
	}
	resp, err := s.Stream(ctx, req, push)
	var refusal *stream.Refusal
	switch {
	case errors.As(err, &refusal):
		return nil, fail(ReasonProposalRefused, refusal, "step %d: stream cancelled after %d bytes", req.Step, st.Buffered())
	case err != nil:
		return nil, fail(ReasonModelError, err, "step %d", req.Step)
	}
	return resp, nil
}
