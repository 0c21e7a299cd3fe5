package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strconv"

	"github.com/beamagents/beamagents/records"
)

// ShardMark separates an entity key from its shard number in a sub-key: KEY#s3 is shard 3
// of KEY (ShardKey).
const ShardMark = "#s"

// MaxShards bounds Definition.Shards: more sub-keys than a runner has workers buys nothing.
const MaxShards = 4096

// Shards returns how many sub-keys one entity's external events are spread over
// (Definition.Shards): 1 when the agent is not sharded.
func (a *Agent) Shards() int { return max(a.def.Shards, 1) }

// ShardOf is the shard, among n, of an external event: the first eight bytes of SHA-256 over
// its envelope's deterministic binary serialization (as DecodeEnvelopes emits it), read
// big-endian, modulo n. It depends on the envelope's bytes alone, never on when or where it
// arrives, so a redelivered event goes to the shard its first delivery went to.
func ShardOf(envelope []byte, n int) int {
	if n <= 1 {
		return 0
	}
	sum := sha256.Sum256(envelope)
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}

// ShardKey is the sub-key of shard i of entity key: key, ShardMark and i in decimal.
func ShardKey(key []byte, i int) []byte {
	out := make([]byte, 0, len(key)+len(ShardMark)+4)
	out = append(append(out, key...), ShardMark...)
	return strconv.AppendInt(out, int64(i), 10)
}

// SplitShard reports whether key is a sub-key of a shard among n (ShardKey's form, i below n
// in decimal without leading zeros), and returns its entity key and shard.
func SplitShard(key []byte, n int) (entity []byte, i int, ok bool) {
	at := bytes.LastIndex(key, []byte(ShardMark))
	if at < 0 || n <= 1 {
		return key, 0, false
	}
	digits := key[at+len(ShardMark):]
	i, err := strconv.Atoi(string(digits))
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != string(digits) {
		return key, 0, false
	}
	return key[:at], i, true
}

// shardProblems are what a sharded definition may not declare: state one sub-key cannot
// hold for its whole entity (memory bounds, a flush of the memory at expiry).
func shardProblems(def Definition) []string {
	switch {
	case def.Shards < 0 || def.Shards > MaxShards:
		return []string{"Shards " + strconv.Itoa(def.Shards) + " is outside 0.." + strconv.Itoa(MaxShards)}
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
