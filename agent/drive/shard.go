package drive

import (
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/shard"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Route is the key an input value of key runs under, and the value it runs as, for an agent
// sharded n ways (agent.Agent.Shards). With n above 1 an external event goes to the sub-key
// of its shard (shard.Of over the value as it came, shard.Key), its envelope's
// entity key rewritten to that sub-key, so that its intents, traces and finals name the
// sub-key and the results and decisions of its intents come back to it. Every other value is
// returned as it is: a tool result, an approval, a signal, an export request, a restore, an
// event already addressed to a sub-key of n, and bytes that do not decode (the core
// dead-letters them). Every host runs its input through Route before keying it, so the
// driver, RunAgent and the fast path see the same keys.
func Route(n int, key, value []byte) ([]byte, []byte) {
	if n <= 1 || len(value) == 0 || value[0] == RestoreMark {
		return key, value
	}
	if _, _, ok := shard.Split(key, n); ok {
		return key, value
	}
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(value, env); err != nil {
		return key, value
	}
	if _, ok := env.GetPayload().(*pb.AgentEnvelope_ExternalEvent); !ok {
		return key, value
	}
	sub := shard.Key(key, shard.Of(value, n))
	env.EntityKey = sub
	return sub, Marshal(env)
}
