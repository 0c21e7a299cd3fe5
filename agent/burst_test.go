package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// TestBurstFails: a burst whose activation fails commits nothing and dead-letters each of its
// events, each with its own envelope; a burst of another key's or out-of-order events is
// refused whole.
func TestBurstFails(t *testing.T) {
	a, err := agent.New(agent.Definition{Name: "fails", Burst: burst.Rule{Window: time.Second},
		Handler: func(hc *agent.Context, tr agent.Trigger) error {
			return hc.Fail(records.ReasonProposalRefused, "no: %d events", len(tr.Events()))
		}})
	if err != nil {
		t.Fatal(err)
	}
	other := ext(1200, "c")
	other.EntityKey = []byte("someone-else")
	for _, tc := range []struct {
		name   string
		envs   []*pb.AgentEnvelope
		reason records.Reason
	}{
		{"the handler fails", []*pb.AgentEnvelope{ext(1000, "a"), ext(1100, "b"), ext(1200, "c")}, records.ReasonProposalRefused},
		{"another key", []*pb.AgentEnvelope{ext(1000, "a"), ext(1100, "b"), other}, records.ReasonEnvelopeInvalid},
		{"out of order", []*pb.AgentEnvelope{ext(1000, "a"), ext(1200, "b"), ext(1100, "c")}, records.ReasonEnvelopeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := host.NewBatch(a, host.MapStore{}, host.Deps{}).ActivateBurst(context.Background(), tc.envs)
			if err == nil || len(res.Writes) != 0 || len(res.Finals) != 0 || len(res.DeadLetters) != len(tc.envs) {
				t.Fatalf("err %v, %d writes, %d finals, %d dead letters", err, len(res.Writes), len(res.Finals), len(res.DeadLetters))
			}
			var texts []string
			for _, d := range res.DeadLetters {
				if d.GetReason() != string(tc.reason) {
					t.Fatalf("reason %s, want %s", d.GetReason(), tc.reason)
				}
				env := &pb.AgentEnvelope{}
				if err := proto.Unmarshal(d.GetEnvelope(), env); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, string(env.GetExternalEvent()))
			}
			if !slices.Equal(texts, []string{"a", "b", "c"}) {
				t.Fatalf("dead letters carry %q", texts)
			}
		})
	}
}
