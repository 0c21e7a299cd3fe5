package statecodec

import (
	"bytes"
	"crypto/sha256"
	"slices"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// LookupStatus is the outcome of a replay-cache lookup.
type LookupStatus uint8

// Lookup outcomes.
const (
	Miss          LookupStatus = iota // no live entry: call the model
	Hit                               // the recorded response: replay it
	DigestOnlyHit                     // only the response's SHA-256 was kept: call the model and compare
)

func (s LookupStatus) String() string {
	switch s {
	case Miss:
		return "miss"
	case Hit:
		return "hit"
	case DigestOnlyHit:
		return "digest_only_hit"
	}
	return "unknown"
}

// Lookup is what a replay-cache lookup found.
type Lookup struct {
	Status   LookupStatus
	Response []byte // the recorded response (a copy), for Hit
	Digest   []byte // SHA-256 of the recorded response, for Hit and DigestOnlyHit
}

// Matches reports whether response is the one recorded: after a DigestOnlyHit it tells a
// retry whether the provider answered the same. It is false after a Miss.
func (l Lookup) Matches(response []byte) bool {
	if l.Status == Miss {
		return false
	}
	d := sha256.Sum256(response)
	return bytes.Equal(d[:], l.Digest)
}

// validCacheKey reports whether key is a cache key: 64 lowercase hex digits, a SHA-256 over
// the canonical request material. Uppercase is refused so one request has exactly one key.
func validCacheKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func (c *Cache) find(key string) int {
	for i, e := range c.blob.Entries {
		if e.GetCacheKey() == key {
			return i
		}
	}
	return -1
}

// expired reports whether an entry first stored at createdMs is past the TTL at atMs, without
// overflow for any pair of int64 times.
func (c *Cache) expired(createdMs, atMs int64) bool {
	return atMs > createdMs && uint64(atMs)-uint64(createdMs) >= uint64(c.ttlMs)
}

// Expire drops every entry whose TTL has passed at event time atMs and returns how many.
// Lookup and Store call it first; call it before Encode to sweep a cache that was not used.
func (c *Cache) Expire(atMs int64) int {
	n := 0
	c.blob.Entries = slices.DeleteFunc(c.blob.Entries, func(e *pb.LlmCacheEntry) bool {
		if !c.expired(e.GetCreatedAtMs(), atMs) {
			return false
		}
		c.blob.TotalResponseBytes -= cacheEntrySize(e)
		n++
		return true
	})
	c.stats.Expired += int64(n)
	return n
}

func (c *Cache) touch(i int, atMs int64) *pb.LlmCacheEntry {
	e := own(&c.owned, c.blob.Entries, i)
	moveToBack(c.blob.Entries, i)
	e.LastAccessMs = max(e.LastAccessMs, atMs)
	return e
}

// Lookup finds key at event time atMs, after expiring entries past their TTL. A live entry
// becomes the most recently used. A full entry is replayed only if its response still matches
// its digest; one that does not (or a digest-only entry without a 32-byte digest) is dropped,
// counted in Stats.CorruptEntries, and reported as a Miss. A key that is not 64 lowercase hex
// gives [ErrInvalidArgument].
func (c *Cache) Lookup(key string, atMs int64) (Lookup, error) {
	if !validCacheKey(key) {
		return Lookup{}, invalid(CellLLMCache, "cache key is not 64 lowercase hex digits")
	}
	c.Expire(atMs)
	i := c.find(key)
	if i < 0 {
		return Lookup{Status: Miss}, nil
	}
	e := c.blob.Entries[i]
	if !intact(e) {
		c.blob.TotalResponseBytes -= cacheEntrySize(e)
		c.blob.Entries = slices.Delete(c.blob.Entries, i, i+1)
		c.stats.CorruptEntries++
		return Lookup{Status: Miss}, nil
	}
	e = c.touch(i, atMs)
	if e.GetDigestOnly() {
		return Lookup{Status: DigestOnlyHit, Digest: bytes.Clone(e.GetResponseDigest())}, nil
	}
	return Lookup{Status: Hit, Response: bytes.Clone(e.GetResponse()), Digest: bytes.Clone(e.GetResponseDigest())}, nil
}

// intact reports whether an entry can be replayed: a 32-byte digest, and for a full entry a
// response that hashes to it.
func intact(e *pb.LlmCacheEntry) bool {
	if len(e.GetResponseDigest()) != sha256.Size {
		return false
	}
	if e.GetDigestOnly() {
		return len(e.GetResponse()) == 0
	}
	d := sha256.Sum256(e.GetResponse())
	return bytes.Equal(d[:], e.GetResponseDigest())
}

// Store records response for key at event time atMs as the most recently used entry, after
// expiring entries past their TTL, then evicts least recently used entries until both caps
// hold; the new entry itself is never evicted. A response larger than MaxResponseBytes is
// kept as digest only (its SHA-256), which Store reports. Storing a key again replaces its
// response; created_at_ms, which starts the TTL, is kept when the response is the same one.
// A key that is not 64 lowercase hex gives [ErrInvalidArgument] and changes nothing.
func (c *Cache) Store(key string, response []byte, atMs int64) (digestOnly bool, err error) {
	if !validCacheKey(key) {
		return false, invalid(CellLLMCache, "cache key is not 64 lowercase hex digits")
	}
	c.Expire(atMs)
	var e *pb.LlmCacheEntry
	if i := c.find(key); i >= 0 {
		e = c.touch(i, atMs)
		c.blob.TotalResponseBytes -= cacheEntrySize(e)
		if d := sha256.Sum256(response); !bytes.Equal(d[:], e.GetResponseDigest()) {
			e.CreatedAtMs = atMs
		}
	} else {
		e = &pb.LlmCacheEntry{CacheKey: key, CreatedAtMs: atMs, LastAccessMs: atMs}
		c.owned.created(e)
		c.blob.Entries = append(c.blob.Entries, e)
	}
	if int64(len(response)) > c.opts.MaxResponseBytes {
		c.keepDigestOnly(e, response)
	} else {
		d := sha256.Sum256(response)
		e.Response, e.ResponseDigest, e.DigestOnly = bytes.Clone(response), d[:], false
		c.blob.TotalResponseBytes += int64(len(response))
	}
	c.evict()
	return e.DigestOnly, nil
}
