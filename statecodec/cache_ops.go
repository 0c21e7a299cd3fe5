package statecodec

import (
	"bytes"
	"crypto/sha256"
	"math"
	"slices"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/swar"
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
	Answer   Answer // what was recorded with the response, for Hit and DigestOnlyHit
}

// Answer is what an entry records of its response besides the bytes: the provider's token
// usage and the fallback model that answered.
type Answer struct {
	InputTokens, OutputTokens int64
	AnsweredBy                string
}

func answerOf(e *pb.LlmCacheEntry) Answer {
	return Answer{InputTokens: e.GetInputTokens(), OutputTokens: e.GetOutputTokens(), AnsweredBy: e.GetAnsweredBy()}
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
// Every lookup and store checks its key: eight digits are tested at once.
func validCacheKey(key string) bool {
	if len(key) != 2*sha256.Size {
		return false
	}
	const ones, high = swar.Ones, swar.High
	all := uint64(high)
	for i := 0; i < len(key); i += 8 {
		x := swar.Load64(key[i:])
		// A byte below 0x80 plus 0x80-lo has its high bit set iff it is at least lo, and the
		// sums do not carry into the next byte; a byte at or above 0x80 fails by &^ x (its
		// carry may spoil the next byte's test, never make the word pass).
		digit := (x + (0x80-'0')*ones) &^ (x + (0x80-'9'-1)*ones)
		letter := (x + (0x80-'a')*ones) &^ (x + (0x80-'f'-1)*ones)
		all &= (digit | letter) &^ x
	}
	return all == high
}

// find returns the index of key, a valid key, or -1. Comparing first bytes first spares the
// call that compares whole keys for nearly every other entry.
func (c *Cache) find(key string) int {
	for i, e := range c.blob.Entries {
		if k := e.GetCacheKey(); len(k) == len(key) && k[0] == key[0] && k == key {
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
	// An entry expires no later than one created after it: none has while the oldest has not.
	if !c.expired(c.oldest, atMs) {
		return 0
	}
	for _, e := range c.blob.Entries[:c.owned.n] {
		if c.expired(e.GetCreatedAtMs(), atMs) {
			c.owned.n-- // removed from the shared prefix
		}
	}
	n := 0
	c.oldest = math.MaxInt64
	ownList(&c.owned, &c.blob.Entries)
	c.blob.Entries = slices.DeleteFunc(c.blob.Entries, func(e *pb.LlmCacheEntry) bool {
		if !c.expired(e.GetCreatedAtMs(), atMs) {
			c.oldest = min(c.oldest, e.GetCreatedAtMs())
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
	e := touchEntry(&c.owned, &c.blob.Entries, i)
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
		ownList(&c.owned, &c.blob.Entries)
		c.blob.Entries = slices.Delete(c.blob.Entries, i, i+1)
		c.owned.removed(i)
		c.stats.CorruptEntries++
		return Lookup{Status: Miss}, nil
	}
	e = c.touch(i, atMs)
	if e.GetDigestOnly() {
		return Lookup{Status: DigestOnlyHit, Digest: bytes.Clone(e.GetResponseDigest()), Answer: answerOf(e)}, nil
	}
	response, digest := cloneBoth(e.GetResponse(), e.GetResponseDigest())
	return Lookup{Status: Hit, Response: response, Digest: digest, Answer: answerOf(e)}, nil
}

// cloneBoth copies a and b into one allocation, for a response and its digest, which live and
// die together; each copy is nil when its source is, as with bytes.Clone.
func cloneBoth(a, b []byte) ([]byte, []byte) {
	buf := make([]byte, len(a)+len(b))
	copy(buf, a)
	copy(buf[len(a):], b)
	ca, cb := buf[:len(a):len(a)], buf[len(a):]
	if a == nil {
		ca = nil
	}
	if b == nil {
		cb = nil
	}
	return ca, cb
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
	return c.StoreAnswer(key, response, Answer{}, atMs)
}

// StoreAnswer is Store that also records a's usage and answering model with the response
// (replacing what an earlier store of key recorded).
func (c *Cache) StoreAnswer(key string, response []byte, a Answer, atMs int64) (digestOnly bool, err error) {
	if !validCacheKey(key) {
		return false, invalid(CellLLMCache, "cache key is not 64 lowercase hex digits")
	}
	c.Expire(atMs)
	d := sha256.Sum256(response)
	var e *pb.LlmCacheEntry
	if i := c.find(key); i >= 0 {
		e = c.touch(i, atMs)
		c.blob.TotalResponseBytes -= cacheEntrySize(e)
		if !bytes.Equal(d[:], e.GetResponseDigest()) {
			e.CreatedAtMs = atMs
			c.oldest = min(c.oldest, atMs)
		}
	} else {
		e = &pb.LlmCacheEntry{CacheKey: key, CreatedAtMs: atMs, LastAccessMs: atMs}
		c.oldest = min(c.oldest, atMs)
		ownList(&c.owned, &c.blob.Entries)
		c.blob.Entries = append(c.blob.Entries, e)
	}
	if int64(len(response)) > c.opts.MaxResponseBytes {
		c.keepDigestOnly(e, d)
	} else {
		e.Response, e.ResponseDigest = cloneBoth(response, d[:])
		e.DigestOnly = false
		c.blob.TotalResponseBytes += int64(len(response))
	}
	e.InputTokens, e.OutputTokens, e.AnsweredBy = a.InputTokens, a.OutputTokens, a.AnsweredBy
	c.evict()
	return e.DigestOnly, nil
}
