package burst_test

import (
	"testing"
	"time"

	"github.com/beamagents/beamagents/agent/burst"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// FuzzGather: whatever the events and bounds, a burst is its first event and events of its
// window in their order, within its bounds, and with the others it is the input again.
func FuzzGather(f *testing.F) {
	f.Add(int64(2000), 3, 10, []byte{0, 5, 1, 3, 0, 0, 9, 200})
	f.Add(int64(1), 1, 0, []byte{7})
	f.Fuzz(func(t *testing.T, window int64, maxEvents, maxBytes int, shape []byte) {
		r := burst.Rule{Window: time.Duration(window%100_000) * time.Millisecond, MaxEvents: maxEvents % 50, MaxBytes: maxBytes % 500}
		if r.MaxEvents <= 0 || r.MaxBytes <= 0 || r.Window <= 0 {
			return
		}
		var envs []*pb.AgentEnvelope
		at := int64(0)
		for i, s := range shape {
			at += int64(s % 16 * 100)
			env := ext(at, string(make([]byte, int(s)%40)))
			if s%11 == 0 && i > 0 {
				env = toolResult(at) // not an external event: never joins
			}
			envs = append(envs, env)
		}
		if len(envs) == 0 {
			return
		}
		gathered, others := r.Gather(envs)
		if gathered[0] != envs[0] || len(gathered) > r.MaxEvents && len(gathered) > 1 {
			t.Fatalf("burst of %d events from %d, first kept %v", len(gathered), len(envs), gathered[0] == envs[0])
		}
		size := 0
		for i, e := range gathered {
			size += len(e.GetExternalEvent())
			if i > 0 && (e.GetExternalEvent() == nil && e.GetToolResult() != nil || e.GetEventTimeMs() >= envs[0].GetEventTimeMs()+window%100_000) {
				t.Fatalf("event %d of the burst is outside it", i)
			}
		}
		if len(gathered) > 1 && size > r.MaxBytes {
			t.Fatalf("%d bytes over the bound %d", size, r.MaxBytes)
		}
		// gathered and others interleave back into envs, each in its order.
		var i, j int
		for _, e := range envs {
			switch {
			case i < len(gathered) && gathered[i] == e:
				i++
			case j < len(others) && others[j] == e:
				j++
			default:
				t.Fatal("burst and others are not a split of the input in order")
			}
		}
		if i != len(gathered) || j != len(others) {
			t.Fatal("burst and others do not cover the input")
		}
	})
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule burst.Rule
		ok   bool
	}{
		{"zero", burst.Rule{}, true},
		{"window", burst.Rule{Window: 2 * time.Second, MaxEvents: 8, MaxBytes: 1024}, true},
		{"negative window", burst.Rule{Window: -time.Second}, false},
		{"negative events", burst.Rule{Window: time.Second, MaxEvents: -1}, false},
		{"negative bytes", burst.Rule{Window: time.Second, MaxBytes: -1}, false},
		{"part of a millisecond", burst.Rule{Window: 1500 * time.Microsecond}, false},
	} {
		if err := tc.rule.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestResolved(t *testing.T) {
	for _, tc := range []struct {
		rule, want burst.Rule
	}{
		{burst.Rule{}, burst.Rule{MaxEvents: 16, MaxBytes: 64 << 10}},
		{burst.Rule{Window: time.Second, MaxEvents: 2, MaxBytes: 5}, burst.Rule{Window: time.Second, MaxEvents: 2, MaxBytes: 5}},
	} {
		if got := tc.rule.Resolved(); got != tc.want {
			t.Errorf("%+v.Resolved() = %+v, want %+v", tc.rule, got, tc.want)
		}
	}
	if (burst.Rule{}).On() || !(burst.Rule{Window: time.Millisecond}).On() || (burst.Rule{Window: 2 * time.Second}).WindowMs() != 2000 {
		t.Error("On or WindowMs")
	}
}

func ext(t int64, text string) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: t, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}
}

func toolResult(t int64) *pb.AgentEnvelope {
	return &pb.AgentEnvelope{EntityKey: []byte("k"), EventTimeMs: t, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
		EntityKey: []byte("k"), Status: pb.ToolResult_OK, Payload: []byte("{}")}}}
}
