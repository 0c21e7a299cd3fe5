package agenttest

import (
	"context"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// SendBurst delivers events to the key at the current event time as one burst, as a pipeline
// gathers a key's events under Definition.Burst: one activation whose trigger lists them
// all (agent.Trigger.Events), or, while the key is suspended, each queued in its inbox. The
// harness does not gather Send's events itself: a test says which events arrive together.
func (h *Harness) SendBurst(entity string, events ...[]byte) *host.Result {
	h.t.Helper()
	envs := make([]*pb.AgentEnvelope, len(events))
	for i, e := range events {
		envs[i] = &pb.AgentEnvelope{EntityKey: []byte(entity), EventTimeMs: h.now, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: e}}
	}
	k := h.key([]byte(entity))
	res, _ := host.NewBatch(h.a, k.state, h.deps).ActivateBurst(context.Background(), envs) // a failure is its dead letters
	k.apply(res)
	return res
}
