// Package canary is the rule that puts an entity key in a canary's slice: the keys a run
// hands to a candidate agent while the rest stay on the baseline (`run --canary_agent
// CANDIDATE --canary_percent P`, docs/changes.md).
//
// A key's bucket is the first 8 bytes of the SHA-256 of the entity key, read big-endian,
// modulo Buckets (10,000); the key is in the slice of P percent when its bucket is below
// P×100. The bucket depends on the key's bytes alone, so it is the same across restarts,
// relaunches, workers and runners, and the slice is monotone: raising P only adds keys to it,
// lowering P only removes keys from it. P has a resolution of 0.01 percent.
package canary
