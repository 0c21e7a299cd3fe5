package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/tracing"
)

// The namespaces of docs/identity.md, written out here so that the ids below are recomputed
// from the contract with the uuid library, not with the code that emitted them.
var (
	intentNamespace = uuid.MustParse("6f3e9d2a-1c47-5b8e-9a10-2d4f6b8c0e11")
	traceNamespace  = uuid.MustParse("b1d7c4e2-93a6-5f08-8c31-7e5a9d0f2b46")
)

func spanOf(key []byte, seq int64, role string, index uint32) string {
	u := uuid.NewSHA1(traceNamespace, fmt.Appendf(nil, "%x|%d|%s|%d", key, seq, role, index))
	return string(u[:8])
}

// checkDemoIdentities reads the demo's outputs under dir and recomputes every intent id from
// its (entity_key, seq, step_index), every trace id from the event's (entity_key, seq), every
// span id from its role and index, and checks that each parent is an attempt's span.
func checkDemoIdentities(t *testing.T, dir string) {
	t.Helper()
	out := filepath.Join(dir, "output")
	intents, err := readOutput(out, pipeline.IntentsName, func() *pb.ToolIntent { return &pb.ToolIntent{} })
	if err != nil {
		t.Fatal(err)
	}
	traces, err := readOutput(out, pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} })
	if err != nil {
		t.Fatal(err)
	}
	if len(intents) == 0 || len(traces) == 0 {
		t.Fatalf("%d intents, %d trace events", len(intents), len(traces))
	}
	for _, ti := range intents {
		want := uuid.NewSHA1(intentNamespace, fmt.Appendf(nil, "%x|%d|%d", ti.GetEntityKey(), ti.GetSeq(), ti.GetStepIndex()))
		if ti.GetIntentId() != want.String() {
			t.Errorf("intent of %q seq %d step %d: id %s, want %s", ti.GetEntityKey(), ti.GetSeq(), ti.GetStepIndex(), ti.GetIntentId(), want)
		}
		if tr := uuid.NewSHA1(traceNamespace, fmt.Appendf(nil, "%x|%d", ti.GetEntityKey(), ti.GetSeq())); !bytes.Equal(ti.GetTraceId(), tr[:]) {
			t.Errorf("intent %s: trace id %x, want %x", ti.GetIntentId(), ti.GetTraceId(), tr[:])
		}
	}
	// The attempts' spans per trace, from their ACTIVATION_START events.
	attempts := map[string]map[string]bool{}
	for _, ev := range traces {
		if ev.GetEventType() != pb.TraceEvent_ACTIVATION_START {
			continue
		}
		role := "activation"
		if ev.GetAttributes()[tracing.AttrActivationKind] == "timer" {
			role = "timer"
		}
		span := spanOf(ev.GetEntityKey(), ev.GetSeq(), role, ev.GetStepIndex())
		if string(ev.GetSpanId()) != span {
			t.Errorf("ACTIVATION_START of %q seq %d at step %d: span %x, want %x", ev.GetEntityKey(), ev.GetSeq(), ev.GetStepIndex(), ev.GetSpanId(), span)
		}
		if attempts[string(ev.GetTraceId())] == nil {
			attempts[string(ev.GetTraceId())] = map[string]bool{}
		}
		attempts[string(ev.GetTraceId())][span] = true
	}
	for _, ev := range traces {
		key, seq := ev.GetEntityKey(), ev.GetSeq()
		if tr := uuid.NewSHA1(traceNamespace, fmt.Appendf(nil, "%x|%d", key, seq)); !bytes.Equal(ev.GetTraceId(), tr[:]) {
			t.Errorf("%s of %q seq %d: trace id %x, want %x", ev.GetEventType(), key, seq, ev.GetTraceId(), tr[:])
		}
		spans := attempts[string(ev.GetTraceId())]
		root := spanOf(key, seq, "activation", 0)
		switch ev.GetEventType() {
		case pb.TraceEvent_ACTIVATION_START, pb.TraceEvent_ACTIVATION_END:
			wantParent := root
			if string(ev.GetSpanId()) == root {
				wantParent = ""
			}
			if !spans[string(ev.GetSpanId())] || string(ev.GetParentSpanId()) != wantParent {
				t.Errorf("%s of %q seq %d: span %x parent %x is not an attempt under the root", ev.GetEventType(), key, seq, ev.GetSpanId(), ev.GetParentSpanId())
			}
		default:
			if want := spanOf(key, seq, ev.GetEventType().String(), ev.GetStepIndex()); string(ev.GetSpanId()) != want {
				t.Errorf("%s of %q seq %d step %d: span %x, want %x", ev.GetEventType(), key, seq, ev.GetStepIndex(), ev.GetSpanId(), want)
			}
			if !spans[string(ev.GetParentSpanId())] {
				t.Errorf("%s of %q seq %d: parent %x is no attempt's span", ev.GetEventType(), key, seq, ev.GetParentSpanId())
			}
		}
	}
}
