package console_test

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// T0 is the fixtures' first event time.
const T0 = int64(1767225601000)

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// frames is msgs as a .binpb file holds them.
func frames(t testing.TB, msgs ...proto.Message) []byte {
	var out []byte
	for _, m := range msgs {
		b := marshal(t, m)
		out = records.AppendFrame(out, b)
	}
	return out
}

func traceID(key string, seq int64) []byte { id := tracing.TraceID([]byte(key), seq); return id[:] }

func event(key string, seq int64, typ pb.TraceEvent_EventType, step uint32, start, end int64, attrs map[string]string) *pb.TraceEvent {
	return &pb.TraceEvent{TraceId: traceID(key, seq), SpanId: []byte{byte(typ), byte(step), byte(start)}, EntityKey: []byte(key), Seq: seq,
		StepIndex: step, EventType: typ, Attributes: attrs, StartMs: start, EndMs: end}
}

// lookupTrace is one activation that calls a model, waits a minute for an orders.lookup
// result, then calls the model again and replies.
func lookupTrace(key string) []proto.Message {
	id := intent.ID([]byte(key), 0, 0)
	t1 := T0 + 60_000
	return []proto.Message{
		event(key, 0, pb.TraceEvent_ACTIVATION_START, 0, T0, T0, map[string]string{tracing.AttrActivationKind: tracing.KindExternalEvent}),
		event(key, 0, pb.TraceEvent_LLM_CALL, 0, T0, T0+1500, map[string]string{tracing.AttrRequestModel: "support-scripted-1", tracing.AttrResponseModel: "scripted",
			tracing.AttrInputTokens: "190", tracing.AttrOutputTokens: "22", tracing.AttrResponseFinishReasons: "stop"}),
		event(key, 0, pb.TraceEvent_INTENT_EMITTED, 0, T0+1500, T0+1500, map[string]string{tracing.AttrIntentID: id, tracing.AttrToolName: "orders.lookup", tracing.AttrIntentKind: "TOOL", tracing.AttrAttempts: "1"}),
		event(key, 0, pb.TraceEvent_SUSPENDED, 0, T0+1500, T0+1500, map[string]string{tracing.AttrIntentID: id, tracing.AttrDeadline: "1767225901000"}),
		event(key, 0, pb.TraceEvent_ACTIVATION_END, 0, T0+1500, T0+1500, map[string]string{tracing.AttrActivationStatus: tracing.StatusSuspended}),
		event(key, 0, pb.TraceEvent_ACTIVATION_START, 1, t1, t1, map[string]string{tracing.AttrActivationKind: tracing.KindToolResult}),
		event(key, 0, pb.TraceEvent_TOOL_CALL, 1, t1, t1, map[string]string{tracing.AttrToolName: "orders.lookup", tracing.AttrToolStatus: "OK"}),
		event(key, 0, pb.TraceEvent_LLM_CALL, 1, t1, t1+1000, map[string]string{tracing.AttrRequestModel: "support-scripted-1", tracing.AttrInputTokens: "236", tracing.AttrOutputTokens: "29"}),
		event(key, 0, pb.TraceEvent_ACTIVATION_END, 1, t1+1000, t1+1000, map[string]string{tracing.AttrActivationStatus: tracing.StatusOK}),
	}
}

// approvalWait is an activation suspended on an approval.
func approvalWait(key string) []proto.Message {
	id := intent.ID([]byte(key), 0, 0)
	return []proto.Message{
		event(key, 0, pb.TraceEvent_ACTIVATION_START, 0, T0+5000, T0+5000, map[string]string{tracing.AttrActivationKind: tracing.KindExternalEvent}),
		event(key, 0, pb.TraceEvent_INTENT_EMITTED, 0, T0+5000, T0+5000, map[string]string{tracing.AttrIntentID: id, tracing.AttrToolName: "payments.refund", tracing.AttrIntentKind: "APPROVAL", tracing.AttrAttempts: "1"}),
		event(key, 0, pb.TraceEvent_SUSPENDED, 0, T0+5000, T0+5000, map[string]string{tracing.AttrIntentID: id, tracing.AttrDeadline: "1767225906000"}),
		event(key, 0, pb.TraceEvent_ACTIVATION_END, 0, T0+5000, T0+5000, map[string]string{tracing.AttrActivationStatus: tracing.StatusSuspended}),
	}
}

func modelError(t testing.TB, key string, at int64) *pb.ActivationErrorRecord {
	env := &pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("where is my order?")}}
	return &pb.ActivationErrorRecord{EntityKey: []byte(key), Reason: "model_error", Detail: "model_error: provider unavailable", EventTimeMs: at,
		FailedInput: &pb.ActivationErrorRecord_Envelope{Envelope: marshal(t, env)}}
}

// writeRun writes a small run's outputs under dir: customer-2's lookup, customer-4 waiting
// for an approval, a model_error and an envelope_invalid dead letter, and a final reply.
func writeRun(t testing.TB, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	traces := append(lookupTrace("customer-2"), approvalWait("customer-4")...)
	files := map[string][]byte{
		"traces.binpb": frames(t, traces...),
		"intents.binpb": frames(t, &pb.ToolIntent{IntentId: intent.ID([]byte("customer-2"), 0, 0), EntityKey: []byte("customer-2"), ToolName: "orders.lookup",
			ArgsJson: `{"support.lookup_order.order_id":"A-1001"}`, CreatedAtMs: T0 + 1500, ExpiresAtMs: T0 + 301500, Kind: pb.ToolIntent_TOOL, TraceId: traceID("customer-2", 0)}),
		"finals.binpb": frames(t, &pb.FinalReply{EntityKey: []byte("customer-2"), CaseId: "support.reply", Message: "Order A-1001 shipped yesterday.", TraceId: traceID("customer-2", 0), CreatedAtMs: T0 + 61000}),
		"dead_letters.binpb": frames(t, modelError(t, "customer-7", T0+9000),
			&pb.ActivationErrorRecord{Reason: "envelope_invalid", Detail: "envelope_invalid: not a json AgentEnvelope", FailedInput: &pb.ActivationErrorRecord_RawRecord{RawRecord: []byte(`{"entityKey": 7}`)}}),
		"snapshots.binpb": nil,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
