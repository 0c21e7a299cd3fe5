package agent_test

import (
	"context"
	"testing"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// BenchmarkNoOpActivation: an external event answered with a final reply from a replay-cache
// hit; no model call.
func BenchmarkNoOpActivation(b *testing.B) {
	a, _ := scenarioAgent(b, "reply")
	deps := host.Deps{Keyring: testKeyring(b)}
	ctx := context.Background()
	first, err := host.Activate(ctx, a, host.MapStore{}, ext(1000, "hi"), deps)
	if err != nil {
		b.Fatal(err)
	}
	st := host.MapStore{statecodec.CellLLMCache: first.Writes[statecodec.CellLLMCache]}
	env := ext(1000, "hi")
	b.ReportAllocs()
	for b.Loop() {
		res, err := host.Activate(ctx, a, st, env, deps)
		if err != nil || res.ModelCalls != 0 || len(res.Finals) != 1 {
			b.Fatalf("%v %d", err, res.ModelCalls)
		}
	}
}

// BenchmarkToolCallAndResume: an external event that emits a tool intent and suspends, then
// the tool result that resumes the activation to a final reply (two model calls).
func BenchmarkToolCallAndResume(b *testing.B) {
	a, _ := scenarioAgent(b, "tool_round_trip")
	deps := host.Deps{Keyring: testKeyring(b)}
	ctx := context.Background()
	call, result := ext(1000, "where is A-1?"), toolResult(2000, 0, 0, `{"status":"packed"}`)
	b.ReportAllocs()
	for b.Loop() {
		st := host.MapStore{}
		res, err := host.Activate(ctx, a, st, call, deps)
		if err != nil || len(res.Intents) != 1 {
			b.Fatal(err)
		}
		st.Apply(res)
		if res, err = host.Activate(ctx, a, st, result, deps); err != nil || len(res.Finals) != 1 {
			b.Fatal(err)
		}
	}
}

// BenchmarkApprovalRoundTrip: approval intent, approval, gated tool intent, tool result,
// final reply.
func BenchmarkApprovalRoundTrip(b *testing.B) {
	a, _ := scenarioAgent(b, "approval_granted")
	deps := host.Deps{Keyring: testKeyring(b)}
	ctx := context.Background()
	call, ok, result := ext(1000, "refund A-1 please"), approve(61000, 0, 0, true), toolResult(62000, 0, 1, `{"refund_id":"R-9"}`)
	b.ReportAllocs()
	for b.Loop() {
		st := host.MapStore{}
		for i, env := range []*pb.AgentEnvelope{call, ok, result} {
			res, err := host.Activate(ctx, a, st, env, deps)
			if err != nil {
				b.Fatalf("input %d: %v", i, err)
			}
			st.Apply(res)
			if i == 2 && len(res.Finals) != 1 {
				b.Fatal("no final reply")
			}
		}
	}
}
