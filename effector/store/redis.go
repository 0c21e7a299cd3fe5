package store

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions configure the Redis store.
type RedisOptions struct {
	Addr string
	// Prefix of every key; default "beamagents:effector:".
	Prefix string
	// DoneTTL bounds how long completions are kept; default 7 days.
	DoneTTL time.Duration
	// Client replaces the one built from Addr.
	Client *redis.Client
}

// Redis is the Store for a fleet of effectors sharing one Redis. A claim is SET NX PX: its
// lease is Redis's own key expiry, so a crashed owner's claim disappears after the lease and
// the next claimant takes it over. Completion is a compare script: it records the result
// unless a completion is already there, which it returns instead.
type Redis struct {
	c      *redis.Client
	prefix string
	ttl    time.Duration
}

// OpenRedis connects to Redis and checks it answers.
func OpenRedis(o RedisOptions) (*Redis, error) {
	if o.Prefix == "" {
		o.Prefix = "beamagents:effector:"
	}
	if o.DoneTTL == 0 {
		o.DoneTTL = 7 * 24 * time.Hour
	}
	c := o.Client
	if c == nil {
		c = redis.NewClient(&redis.Options{Addr: o.Addr, PoolSize: 64})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, &Error{Code: CodeFailed, Detail: "connecting to redis at " + o.Addr, Err: err}
	}
	return &Redis{c: c, prefix: o.Prefix, ttl: o.DoneTTL}, nil
}

// claimScript claims KEYS[1] for ARGV[1] for ARGV[2] ms. It returns {1} claimed, {2, result}
// done, {3} busy, and {4} for a claim taken over from an owner whose record lost its expiry
// (never written by this package; kept so a foreign record cannot wedge an intent).
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], 'c' .. ARGV[1], 'PX', ARGV[2])
  return {1}
end
local tag = string.sub(cur, 1, 1)
if tag == 'd' then return {2, string.sub(cur, 2)} end
if cur == 'c' .. ARGV[1] then
  redis.call('SET', KEYS[1], cur, 'PX', ARGV[2])
  return {1}
end
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('SET', KEYS[1], 'c' .. ARGV[1], 'PX', ARGV[2])
  return {4}
end
return {3}
`)

// completeScript records ARGV[1] as the completion of KEYS[1] (kept ARGV[2] ms) unless one is
// recorded, and returns the recorded completion.
var completeScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and string.sub(cur, 1, 1) == 'd' then return string.sub(cur, 2) end
redis.call('SET', KEYS[1], 'd' .. ARGV[1], 'PX', ARGV[2])
return ARGV[1]
`)

// Claim implements Store. The lease runs on Redis's clock; nowMs is not used.
func (s *Redis) Claim(ctx context.Context, id, owner string, _, leaseMs int64) (Claim, error) {
	key := s.prefix + id
	// Fast path: one round trip when nobody has seen the intent.
	ok, err := s.c.SetNX(ctx, key, string(rune(tagClaim))+owner, time.Duration(leaseMs)*time.Millisecond).Result()
	if err != nil {
		return Claim{}, &Error{Code: CodeFailed, Detail: "claiming " + id, Err: err}
	}
	if ok {
		return Claim{State: Claimed}, nil
	}
	res, err := claimScript.Run(ctx, s.c, []string{key}, owner, leaseMs).Slice()
	if err != nil {
		return Claim{}, &Error{Code: CodeFailed, Detail: "claiming " + id, Err: err}
	}
	switch res[0].(int64) {
	case 1:
		return Claim{State: Claimed}, nil
	case 2:
		return Claim{State: Done, Result: []byte(res[1].(string))}, nil
	case 4:
		return Claim{State: Claimed, TakenOver: true}, nil
	}
	return Claim{State: Busy}, nil
}

// Complete implements Store.
func (s *Redis) Complete(ctx context.Context, id, _ string, result []byte) ([]byte, error) {
	rec, err := completeScript.Run(ctx, s.c, []string{s.prefix + id}, result, s.ttl.Milliseconds()).Text()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, &Error{Code: CodeFailed, Detail: "recording the completion of " + id, Err: err}
	}
	return []byte(rec), nil
}

// Close implements Store.
func (s *Redis) Close() error { return s.c.Close() }
