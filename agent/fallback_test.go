package agent_test

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// fixedModel answers every request with resp (or fails with err).
type fixedModel struct {
	resp *model.Response
	err  error
}

func (m fixedModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	if m.err != nil {
		return nil, m.err
	}
	r := *m.resp
	return &r, nil
}

// A fallback's answer names its model on the LLM_CALL event and in the replay cache, and the
// models passed over with their codes (a breaker's refusal among them).
func TestFallbackAnswerIsRecorded(t *testing.T) {
	text := replyHi(t)
	m := fixedModel{resp: &model.Response{Text: []byte(text), Model: "small-2026", AnsweredBy: "small",
		Passed: []model.Pass{{Model: "large", Code: model.CodeCircuitOpen}}, Usage: model.Usage{InputTokens: 3, OutputTokens: 4}}}
	a := newTestAgent(t, m, agentLimits{}, false)
	store := host.MapStore{}
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1_000_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	res, err := host.Activate(context.Background(), a, store, env, host.Deps{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	store.Apply(res)
	var attrs map[string]string
	for _, ev := range res.Outputs.Traces {
		if ev.GetEventType() == pb.TraceEvent_LLM_CALL {
			attrs = ev.GetAttributes()
		}
	}
	if attrs[tracing.AttrAnsweredBy] != "small" || attrs[tracing.AttrModelsPassed] != "large=model_circuit_open" || attrs[tracing.AttrResponseModel] != "small-2026" {
		t.Fatalf("LLM_CALL attributes %v", attrs)
	}
	c, err := statecodec.DecodeCache(store[statecodec.CellLLMCache], statecodec.CacheOptions{})
	if err != nil || c.Len() != 1 {
		t.Fatal(err)
	}
	if e := c.Proto().GetEntries()[0]; e.GetAnsweredBy() != "small" || e.GetInputTokens() != 3 || e.GetOutputTokens() != 4 {
		t.Fatalf("cache entry %v", e)
	}
}

// A call refused by an open circuit breaker dead-letters as model_error with the refusal's
// code and the input envelope, so it can be redriven; the attempt writes nothing and keeps
// one trace event, an ERROR saying the breaker refused the call, under the root span of the
// activation's trace (the one the activation has when a model answers). A retry emits the
// same bytes; a call that fails otherwise keeps no trace event.
func TestBreakerRefusalDeadLetters(t *testing.T) {
	refused := &model.Error{Code: model.CodeCircuitOpen, Detail: "the circuit breaker of openai http://127.0.0.1:1/v1 m is open"}
	a := newTestAgent(t, fixedModel{err: refused}, agentLimits{}, false)
	env := &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: 1_000_000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}}
	res, err := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{AllowUnsigned: true})
	if !errors.Is(err, model.ErrCircuitOpen) || len(res.DeadLetters) != 1 || len(res.Writes) != 0 {
		t.Fatalf("%v %v %d writes", err, res.DeadLetters, len(res.Writes))
	}
	d := res.DeadLetters[0]
	if d.GetReason() != string(records.ReasonModelError) || !strings.Contains(d.GetDetail(), string(model.CodeCircuitOpen)) || len(d.GetEnvelope()) == 0 {
		t.Fatalf("dead letter %v", d)
	}
	if len(res.Traces) != 1 || len(res.Intents)+len(res.Finals)+len(res.Snapshots) != 0 {
		t.Fatalf("outputs beside the dead letter: %d traces, %d intents, %d finals", len(res.Traces), len(res.Intents), len(res.Finals))
	}
	ev := res.Traces[0]
	want := map[string]string{tracing.AttrErrorType: "model_circuit_open", tracing.AttrReason: "model_error", tracing.AttrOperationName: "chat",
		tracing.AttrRequestModel: ev.GetAttributes()[tracing.AttrRequestModel], tracing.AttrAgent: ev.GetAttributes()[tracing.AttrAgent]}
	if ev.GetEventType() != pb.TraceEvent_ERROR || !maps.Equal(ev.GetAttributes(), want) || want[tracing.AttrRequestModel] == "" ||
		ev.GetStartMs() != env.GetEventTimeMs() || ev.GetEndMs() != env.GetEventTimeMs() {
		t.Fatalf("refusal event %v", ev)
	}
	span := tracing.SpanID(env.GetEntityKey(), ev.GetSeq(), tracing.EventRole(pb.TraceEvent_ERROR), ev.GetStepIndex())
	if !bytes.Equal(ev.GetSpanId(), span[:]) {
		t.Fatalf("span id %x, want %x", ev.GetSpanId(), span)
	}

	text := replyHi(t)
	ok, err := host.Activate(
		context.Background(), newTestAgent(t, fixedModel{resp: &model.Response{Text: []byte(text)}}, agentLimits{}, false),
		host.MapStore{}, env, host.Deps{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	start := ok.Traces[0]
	if start.GetEventType() != pb.TraceEvent_ACTIVATION_START || !bytes.Equal(ev.GetTraceId(), start.GetTraceId()) || !bytes.Equal(ev.GetParentSpanId(), start.GetSpanId()) || ev.GetSeq() != start.GetSeq() {
		t.Fatalf("refusal %v is not under the activation's root %v", ev, start)
	}

	again, _ := host.Activate(context.Background(), a, host.MapStore{}, env, host.Deps{AllowUnsigned: true})
	if !proto.Equal(again.Traces[0], ev) || !proto.Equal(again.DeadLetters[0], d) {
		t.Fatal("a retried refusal emits other bytes")
	}

	down := newTestAgent(t, fixedModel{err: &model.Error{Code: model.CodeUnavailable}}, agentLimits{}, false)
	res, err = host.Activate(context.Background(), down, host.MapStore{}, env, host.Deps{AllowUnsigned: true})
	if !errors.Is(err, model.ErrUnavailable) || len(res.DeadLetters) != 1 || len(res.Traces) != 0 {
		t.Fatalf("unavailable: %v, %d dead letters, %d traces", err, len(res.DeadLetters), len(res.Traces))
	}
}
