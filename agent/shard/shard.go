package shard

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
)

// Mark separates an entity key from its shard number in a sub-key: KEY#s3 is shard 3 of
// KEY (Key).
const Mark = "#s"

// Max bounds agent.Definition.Shards: more sub-keys than a runner has workers buys nothing.
const Max = 4096

// Of is the shard, among n, of an external event: the first eight bytes of SHA-256 over its
// envelope's deterministic binary serialization (as transforms.DecodeEnvelopes emits it), read
// big-endian, modulo n. It depends on the envelope's bytes alone, never on when or where it
// arrives, so a redelivered event goes to the shard its first delivery went to.
func Of(envelope []byte, n int) int {
	if n <= 1 {
		return 0
	}
	sum := sha256.Sum256(envelope)
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(n))
}

// Key is the sub-key of shard i of entity key: key, Mark and i in decimal.
func Key(key []byte, i int) []byte {
	out := make([]byte, 0, len(key)+len(Mark)+4)
	out = append(append(out, key...), Mark...)
	return strconv.AppendInt(out, int64(i), 10)
}

// Split reports whether key is a sub-key of a shard among n (Key's form, i below n in
// decimal without leading zeros), and returns its entity key and shard.
func Split(key []byte, n int) (entity []byte, i int, ok bool) {
	at := bytes.LastIndex(key, []byte(Mark))
	if at < 0 || n <= 1 {
		return key, 0, false
	}
	digits := key[at+len(Mark):]
	i, err := strconv.Atoi(string(digits))
	if err != nil || i < 0 || i >= n || strconv.Itoa(i) != string(digits) {
		return key, 0, false
	}
	return key[:at], i, true
}
