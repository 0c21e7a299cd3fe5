// Package shard is the rule that spreads a hot entity's external events over sub-keys
// (agent.Definition.Shards): an agent sharded n ways runs each external event of entity key
// KEY on the sub-key KEY#s<i> (Key), where i is the event's shard among n (Of), a function
// of the envelope's bytes alone. docs/agents.md, Hot keys.
//
// Invariants:
//   - Of depends on the envelope's bytes and n only, never on when or where the event
//     arrives: a redelivered event goes to the shard its first delivery went to. The
//     function is pinned by a test; changing it would move running entities' events to
//     other sub-keys.
//   - Split undoes Key exactly: a key is a sub-key among n only in Key's form (Mark, then a
//     shard below n in decimal without leading zeros), so every other key is its own entity.
//   - n of 0 or 1 is not sharded: Of is 0, and no key is a sub-key.
//
// The package is plain Go over bytes; it imports nothing of the runtime.
package shard
