package agent

import (
	"strconv"

	"github.com/beamagents/beamagents/agent/shard"
	"github.com/beamagents/beamagents/records"
)

// Shards returns how many sub-keys one entity's external events are spread over
// (Definition.Shards): 1 when the agent is not sharded.
func (a *Agent) Shards() int { return max(a.def.Shards, 1) }

// shardProblems are what a sharded definition may not declare: state one sub-key cannot
// hold for its whole entity (memory bounds, a flush of the memory at expiry).
func shardProblems(def Definition) []string {
	switch {
	case def.Shards < 0 || def.Shards > shard.Max:
		return []string{"Shards " + strconv.Itoa(def.Shards) + " is outside 0.." + strconv.Itoa(shard.Max)}
	case def.Shards <= 1:
		return nil
	}
	var problems []string
	if m := def.Limits.Memory; m.MaxEntries != 0 || m.MaxValueBytes != 0 {
		problems = append(problems, "a sharded agent keeps no working memory (Limits.Memory is set)")
	}
	if def.FlushOnExpiry != "" {
		problems = append(problems, "a sharded agent keeps no working memory to flush (FlushOnExpiry is set)")
	}
	return problems
}

// unsharded refuses an operation of a sharded agent's activation that needs the whole
// entity's state or addresses the entity (what): each sub-key sees only its share of the
// entity's events, so what it remembered would differ by shard, and a signal sent to the
// entity never reaches a sub-key.
func (hc *Context) unsharded(what string) error {
	if n := hc.act.c.a.def.Shards; n > 1 {
		return hc.fails(fail(records.ReasonShardRefused, nil, "%s in an agent sharded %d ways", what, n))
	}
	return nil
}
