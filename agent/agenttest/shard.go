package agenttest

import (
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// routed is env as a pipeline keys it for the harness's agent (drive.Route): a sharded
// agent's external event addressed to its sub-key, anything else as it is.
func (h *Harness) routed(env *pb.AgentEnvelope) *pb.AgentEnvelope {
	n := h.a.Shards()
	if n <= 1 {
		return env
	}
	b := drive.Marshal(env)
	key, v := drive.Route(n, env.GetEntityKey(), b)
	if string(key) == string(env.GetEntityKey()) {
		return env
	}
	out := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(v, out); err != nil {
		return env // Route only moves what decodes
	}
	return out
}
