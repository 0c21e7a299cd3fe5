package agent_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// FuzzBurstGather: whatever the events and bounds, a burst is its first event and events of
// its window in their order, within its bounds, and with the others it is the input again.
func FuzzBurstGather(f *testing.F) {
	f.Add(int64(2000), 3, 10, []byte{0, 5, 1, 3, 0, 0, 9, 200})
	f.Add(int64(1), 1, 0, []byte{7})
	f.Fuzz(func(t *testing.T, window int64, maxEvents, maxBytes int, shape []byte) {
		b := agent.Burst{Window: time.Duration(window%100_000) * time.Millisecond, MaxEvents: maxEvents % 50, MaxBytes: maxBytes % 500}
		if b.MaxEvents <= 0 || b.MaxBytes <= 0 || b.Window <= 0 {
			return
		}
		var envs []*pb.AgentEnvelope
		at := int64(0)
		for i, s := range shape {
			at += int64(s % 16 * 100)
			env := ext(at, string(make([]byte, int(s)%40)))
			if s%11 == 0 && i > 0 {
				env = toolResult(at, 0, 0, "{}") // not an external event: never joins
			}
			envs = append(envs, env)
		}
		if len(envs) == 0 {
			return
		}
		burst, others := b.Gather(envs)
		if burst[0] != envs[0] || len(burst) > b.MaxEvents && len(burst) > 1 {
			t.Fatalf("burst of %d events from %d, first kept %v", len(burst), len(envs), burst[0] == envs[0])
		}
		size := 0
		for i, e := range burst {
			size += len(e.GetExternalEvent())
			if i > 0 && (e.GetExternalEvent() == nil && e.GetToolResult() != nil || e.GetEventTimeMs() >= envs[0].GetEventTimeMs()+window%100_000) {
				t.Fatalf("event %d of the burst is outside it", i)
			}
		}
		if len(burst) > 1 && size > b.MaxBytes {
			t.Fatalf("%d bytes over the bound %d", size, b.MaxBytes)
		}
		// burst and others interleave back into envs, each in its order.
		var i, j int
		for _, e := range envs {
			switch {
			case i < len(burst) && burst[i] == e:
				i++
			case j < len(others) && others[j] == e:
				j++
			default:
				t.Fatal("burst and others are not a split of the input in order")
			}
		}
		if i != len(burst) || j != len(others) {
			t.Fatal("burst and others do not cover the input")
		}
	})
}

// TestBurstFails: a burst whose activation fails commits nothing and dead-letters each of its
// events, each with its own envelope; a burst of another key's or out-of-order events is
// refused whole.
func TestBurstFails(t *testing.T) {
	a, err := agent.New(agent.Definition{Name: "fails", Burst: agent.Burst{Window: time.Second},
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
