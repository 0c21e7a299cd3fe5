package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
)

func init() {
	register.DoFn3x0[[]byte, []byte, func([]byte, []byte)](&shardFn{})
}

// ShardScope is the scope of the step that spreads a sharded agent's external events over
// their entity's sub-keys (agent.Definition.Shards). A pipeline of an agent that is not
// sharded has no such step.
const ShardScope = "Shard"

// shardKeyed is keyed with a sharded agent's external events moved to their sub-keys
// (drive.Route), or keyed itself for an agent that is not sharded, whose graph stays as it
// was. opts must have passed Options.Check.
func shardKeyed(s beam.Scope, opts Options, keyed beam.PCollection) (beam.PCollection, error) {
	a, err := agent.Build(opts.Agent, opts.Config)
	if err != nil || a.Shards() <= 1 {
		return keyed, err
	}
	return beam.ParDo(s.Scope(ShardScope), &shardFn{Shards: a.Shards()}, keyed), nil
}

// shardFn routes each keyed input value of an agent sharded Shards ways.
type shardFn struct {
	Shards int
}

func (f *shardFn) ProcessElement(key, value []byte, emit func([]byte, []byte)) {
	emit(drive.Route(f.Shards, key, value))
}
