package store

import (
	"context"
	"fmt"
	"strings"
)

// ClaimState is what a claim found.
type ClaimState int

// Claim states.
const (
	// Claimed: the caller holds the claim and must execute, then Complete.
	Claimed ClaimState = iota + 1
	// Done: a completion is recorded; Claim.Result holds it and nothing runs again.
	Done
	// Busy: another owner holds an unexpired claim; try again later.
	Busy
)

// Claim is the answer of Store.Claim.
type Claim struct {
	State ClaimState
	// Result is the recorded completion (Done).
	Result []byte
	// TakenOver is set when the caller's claim replaced an expired claim of another owner
	// (a crashed effector's).
	TakenOver bool
}

// Store is a durable deduplication store keyed by intent id. Claim before executing; record
// the completion after. Implementations are safe for concurrent use by many goroutines and,
// for shared stores, many processes.
type Store interface {
	// Claim takes the claim on id for owner until nowMs+leaseMs, unless a completion is
	// recorded (Done) or another owner's claim has not expired (Busy). An expired claim of
	// another owner is taken over.
	Claim(ctx context.Context, id, owner string, nowMs, leaseMs int64) (Claim, error)
	// Complete records result as id's completion and returns the recorded completion: result,
	// or the one another owner recorded first (after taking over this owner's expired claim).
	Complete(ctx context.Context, id, owner string, result []byte) ([]byte, error)
	Close() error
}

// Open opens a store from a reference: bbolt:PATH or redis:ADDR (host:port).
func Open(ref string) (Store, error) {
	kind, arg, ok := strings.Cut(ref, ":")
	if !ok || arg == "" {
		return nil, &Error{Code: CodeRef, Detail: fmt.Sprintf("dedup store %q: want bbolt:PATH or redis:ADDR", ref)}
	}
	switch kind {
	case "bbolt":
		return OpenBolt(arg)
	case "redis":
		return OpenRedis(RedisOptions{Addr: arg})
	}
	return nil, &Error{Code: CodeRef, Detail: fmt.Sprintf("dedup store %q: unknown kind %q (want bbolt or redis)", ref, kind)}
}

// Record encoding shared by the stores: 'c' + owner for a claim (bbolt adds the lease end),
// 'd' + result for a completion.
const (
	tagClaim = 'c'
	tagDone  = 'd'
)
