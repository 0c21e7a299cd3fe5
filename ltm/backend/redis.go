package backend

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beamagents/beamagents/ltm"
)

// RedisOptions configure the Redis store.
type RedisOptions struct {
	// URL is redis://[USER:PASSWORD@]HOST:PORT[/DB] (rediss:// for TLS).
	URL string
	// Prefix of every Redis key; default "beamagents:ltm:".
	Prefix string
	// Client replaces the one built from URL.
	Client *redis.Client
}

// Redis is the Store on a Redis server, shared by every worker. Each (entity, namespace)
// holds two Redis keys in one cluster hash slot: a hash of key → record (values and
// tombstones) and a sorted set of the live keys (all scored 0, so ranged by bytes) for List.
// Writes and lists are Lua scripts, so the seq guard and the two keys change atomically.
type Redis struct {
	c      *redis.Client
	prefix string
}

// OpenRedis connects to Redis and checks it answers.
func OpenRedis(ctx context.Context, o RedisOptions) (*Redis, error) {
	if o.Prefix == "" {
		o.Prefix = "beamagents:ltm:"
	}
	c := o.Client
	if c == nil {
		opts, err := redis.ParseURL(o.URL)
		if err != nil {
			// The parser's message may quote the URL, password included: drop it.
			return nil, &ltm.Error{Code: ltm.CodeRef, Detail: "redis reference: want redis://[USER:PASSWORD@]HOST:PORT[/DB]"}
		}
		c = redis.NewClient(opts)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, failed(err, "connecting to redis at %s", c.Options().Addr)
	}
	return &Redis{c: c, prefix: o.Prefix}, nil
}

// keys are the record hash and the live-key set of (entity, namespace); the hash tag keeps
// both in one cluster slot.
func (s *Redis) keys(entity []byte, namespace string) []string {
	tag := s.prefix + "{" + hex.EncodeToString(scopeKey(entity, namespace)) + "}"
	return []string{tag + ":r", tag + ":k"}
}

// namespacesKey is the set of the namespaces entity has written live entries in.
func (s *Redis) namespacesKey(entity []byte) string {
	scope := binary.AppendUvarint(nil, uint64(len(entity)))
	return s.prefix + "{" + hex.EncodeToString(append(scope, entity...)) + "}:n"
}

// writeScript writes record ARGV[2] under field ARGV[1] of hash KEYS[1] unless the stored
// record's seq (its first 8 bytes, compared byte-wise) is higher, and adds the field to the
// live set KEYS[2] (ARGV[3] = "1") or removes it. It returns 1 written, 0 stale, -1 when the
// stored record is too short to hold a seq.
var writeScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  if #cur < 9 then return -1 end
  for i = 1, 8 do
    local a, b = string.byte(cur, i), string.byte(ARGV[2], i)
    if a ~= b then
      if a > b then return 0 end
      break
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[2], 0, ARGV[1])
else
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
`)

// listScript returns key, record pairs of the first ARGV[3] live keys of KEYS[2] in the lex
// range [ARGV[1], ARGV[2]], records from KEYS[1].
var listScript = redis.NewScript(`
local keys = redis.call('ZRANGEBYLEX', KEYS[2], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
if #keys == 0 then return out end
local recs = redis.call('HMGET', KEYS[1], unpack(keys))
for i = 1, #keys do
  out[#out + 1] = keys[i]
  out[#out + 1] = recs[i] or ''
end
return out
`)

func (s *Redis) write(ctx context.Context, entity []byte, namespace, key string, r record) error {
	live := "0"
	if r.live {
		live = "1"
		// The entity's namespace index is in another cluster slot, so not in the script: it
		// is written first and may list a namespace whose write then failed or was stale;
		// Namespaces checks each listed one for live keys.
		if err := s.c.SAdd(ctx, s.namespacesKey(entity), namespace).Err(); err != nil {
			return failed(err, "indexing namespace %q", namespace)
		}
	}
	n, err := writeScript.Run(ctx, s.c, s.keys(entity, namespace), key, encodeRecord(r), live).Int()
	switch {
	case err != nil:
		return failed(err, "writing key %q", key)
	case n == 0:
		return stale(key, r.seq)
	case n < 0:
		return corrupt("stored record of key %q has no seq", key)
	}
	return nil
}

// Put implements Store.
func (s *Redis) Put(ctx context.Context, e ltm.Entry) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	return s.write(ctx, e.Entity, e.Namespace, e.Key, record{seq: e.Seq, live: true, value: e.Value})
}

// Delete implements Store.
func (s *Redis) Delete(ctx context.Context, entity []byte, namespace, key string, seq int64) error {
	if err := checkKey(entity, namespace, key); err != nil {
		return err
	}
	if err := checkSeq(seq); err != nil {
		return err
	}
	return s.write(ctx, entity, namespace, key, record{seq: seq})
}

// Get implements Store.
func (s *Redis) Get(ctx context.Context, entity []byte, namespace, key string) (ltm.Entry, bool, error) {
	if err := checkKey(entity, namespace, key); err != nil {
		return ltm.Entry{}, false, err
	}
	b, err := s.c.HGet(ctx, s.keys(entity, namespace)[0], key).Bytes()
	if errors.Is(err, redis.Nil) {
		return ltm.Entry{}, false, nil
	}
	if err != nil {
		return ltm.Entry{}, false, failed(err, "reading key %q", key)
	}
	return entryOf(entity, namespace, key, b)
}

// List implements Store.
func (s *Redis) List(ctx context.Context, entity []byte, namespace, prefix string, limit int) ([]ltm.Entry, error) {
	if err := checkList(entity, namespace, prefix, limit); err != nil {
		return nil, err
	}
	lo, hi := "-", "+"
	if prefix != "" {
		lo = "[" + prefix
	}
	if end := prefixEnd([]byte(prefix)); end != nil {
		hi = "(" + string(end)
	}
	res, err := listScript.Run(ctx, s.c, s.keys(entity, namespace), lo, hi, limit).StringSlice()
	if err != nil {
		return nil, failed(err, "listing namespace %q", namespace)
	}
	out := make([]ltm.Entry, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		e, ok, err := entryOf(entity, namespace, res[i], []byte(res[i+1]))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, corrupt("live key %q holds a tombstone", res[i])
		}
		out = append(out, e)
	}
	return out, nil
}

// Namespaces implements Store: the entity's indexed namespaces whose live-key set is not
// empty.
func (s *Redis) Namespaces(ctx context.Context, entity []byte, limit int) ([]string, error) {
	if err := checkNamespaces(entity, limit); err != nil {
		return nil, err
	}
	names, err := s.c.SMembers(ctx, s.namespacesKey(entity)).Result()
	if err != nil {
		return nil, failed(err, "listing namespaces")
	}
	slices.Sort(names)
	var out []string
	for _, ns := range names {
		if len(out) == limit {
			break
		}
		n, err := s.c.ZCard(ctx, s.keys(entity, ns)[1]).Result()
		if err != nil {
			return nil, failed(err, "listing namespace %q", ns)
		}
		if n > 0 {
			out = append(out, ns)
		}
	}
	return out, nil
}

// Close implements Store.
func (s *Redis) Close() error { return s.c.Close() }

// entryOf decodes a stored record of key into its entry; false for a tombstone.
func entryOf(entity []byte, namespace, key string, b []byte) (ltm.Entry, bool, error) {
	r, err := decodeRecord(b)
	if err != nil {
		return ltm.Entry{}, false, &ltm.Error{Code: ltm.CodeCorrupt, Detail: fmt.Sprintf("key %q", key), Err: err}
	}
	if !r.live {
		return ltm.Entry{}, false, nil
	}
	return ltm.Entry{Entity: bytes.Clone(entity), Namespace: namespace, Key: key, Value: r.value, Seq: r.seq}, true, nil
}
