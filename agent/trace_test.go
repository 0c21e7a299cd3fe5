package agent_test

import (
	"bytes"
	"testing"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/tracing"
)

// checkTraceIdentity checks the trace events of one Result against the identity contract
// (docs/identity.md): each attempt is bracketed by ACTIVATION_START and ACTIVATION_END with
// the attempt's span id (role activation, or timer for a deadline firing, at the step it
// entered at); every other event is a span of its type at its step whose parent is the
// attempt's span; the first attempt's span (activation at step 0) is the activation's root
// and parents every later attempt's span; every event is in the trace of its (key, seq).
func checkTraceIdentity(t *testing.T, traces []*pb.TraceEvent) {
	t.Helper()
	var span, parent []byte // the open attempt's span and parent; nil between attempts
	for i, ev := range traces {
		key, seq := ev.GetEntityKey(), ev.GetSeq()
		if id := tracing.TraceID(key, seq); !bytes.Equal(ev.GetTraceId(), id[:]) {
			t.Fatalf("event %d (%s): trace id %x, want %x", i, ev.GetEventType(), ev.GetTraceId(), id)
		}
		root := tracing.SpanID(key, seq, tracing.RoleActivation, 0)
		switch ev.GetEventType() {
		case pb.TraceEvent_ACTIVATION_START:
			if span != nil {
				t.Fatalf("event %d: an attempt starts inside another", i)
			}
			role := tracing.RoleActivation
			if ev.GetAttributes()[tracing.AttrActivationKind] == tracing.KindTimer {
				role = tracing.RoleTimer
			}
			want := tracing.SpanID(key, seq, role, ev.GetStepIndex())
			span, parent = want[:], root[:]
			if bytes.Equal(span, root[:]) {
				parent = nil
			}
			// Only the attempt that starts the activation is its root.
			if kind := ev.GetAttributes()[tracing.AttrActivationKind]; (kind == tracing.KindExternalEvent) != (parent == nil) {
				t.Fatalf("event %d: a %q attempt entered at step %d (root span: %v)", i, kind, ev.GetStepIndex(), parent == nil)
			}
		case pb.TraceEvent_ACTIVATION_END:
			if span == nil {
				t.Fatalf("event %d: ACTIVATION_END outside an attempt", i)
			}
			if ev.GetAttributes()[tracing.AttrActivationStatus] == "" {
				t.Fatalf("event %d: ACTIVATION_END without %s", i, tracing.AttrActivationStatus)
			}
		default:
			if span == nil {
				t.Fatalf("event %d (%s) outside an attempt", i, ev.GetEventType())
			}
			want := tracing.SpanID(key, seq, tracing.EventRole(ev.GetEventType()), ev.GetStepIndex())
			if !bytes.Equal(ev.GetSpanId(), want[:]) || !bytes.Equal(ev.GetParentSpanId(), span) {
				t.Fatalf("event %d (%s at step %d): span %x parent %x, want span %x parent %x",
					i, ev.GetEventType(), ev.GetStepIndex(), ev.GetSpanId(), ev.GetParentSpanId(), want, span)
			}
			continue
		}
		if !bytes.Equal(ev.GetSpanId(), span) || !bytes.Equal(ev.GetParentSpanId(), parent) {
			t.Fatalf("event %d (%s): span %x parent %x, want span %x parent %x", i, ev.GetEventType(), ev.GetSpanId(), ev.GetParentSpanId(), span, parent)
		}
		if ev.GetEventType() == pb.TraceEvent_ACTIVATION_END {
			span, parent = nil, nil
		}
	}
	if span != nil {
		t.Fatal("an attempt has no ACTIVATION_END")
	}
}
