package statecodec

import (
	"crypto/sha256"
	"math"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

// Replay cache defaults.
const (
	DefaultCacheMaxEntries       int           = 64
	DefaultCacheTTL              time.Duration = 6 * time.Hour
	DefaultCacheMaxResponseBytes int64         = 100 << 10 // 100 KiB of stored responses
)

// CacheOptions bound the replay cache. The zero value selects the defaults.
type CacheOptions struct {
	// MaxEntries caps the number of entries, digest-only ones included; ≤ 0 selects
	// DefaultCacheMaxEntries.
	MaxEntries int
	// TTL is how long after its first store (in event time) an entry is replayed; ≤ 0 selects
	// DefaultCacheTTL. Milliseconds are the unit of the blob; a positive TTL under 1 ms counts
	// as 1 ms.
	TTL time.Duration
	// MaxResponseBytes caps total_response_bytes; a single response larger than it is kept as
	// digest only. ≤ 0 selects DefaultCacheMaxResponseBytes.
	MaxResponseBytes int64
	// Schema is the state schema the cache is stamped with and migrated to; nil selects
	// migrate.Default(), the schema of this build.
	Schema *migrate.Registry
}

func (o CacheOptions) resolved() CacheOptions {
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultCacheMaxEntries
	}
	if o.TTL <= 0 {
		o.TTL = DefaultCacheTTL
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultCacheMaxResponseBytes
	}
	return o
}

// Cache is one key's model replay cache (cell [CellLLMCache]): an LlmCacheBlob kept within its
// caps, with entries in LRU order and total_response_bytes exact after every operation. It is
// not safe for concurrent use.
type Cache struct {
	blob  *pb.LlmCacheBlob
	opts  CacheOptions
	ttlMs int64
	stats Stats
	owned shared // see Clone
	// oldest is at most the creation time of every entry (MaxInt64 when there is none): while
	// it has not expired, no entry has, and Expire need not look at them.
	oldest int64
}

// NewCache returns an empty cache stamped with the current version of opts.Schema.
func NewCache(opts CacheOptions) *Cache {
	opts = opts.resolved()
	return &Cache{
		blob:   &pb.LlmCacheBlob{StateSchemaVersion: schemaOf(opts.Schema).Current()},
		opts:   opts,
		ttlMs:  max(1, opts.TTL.Milliseconds()),
		oldest: math.MaxInt64,
	}
}

// DecodeCache decodes a [CellLLMCache] cell: parse, version check, migrate, then verify. Empty
// bytes give an empty cache. A digest-only entry that carries a response loses it, a stored
// total that disagrees with the entries is recomputed, a key that appears twice keeps its
// later entry, a response over MaxResponseBytes becomes digest only, and the blob is evicted
// down to the caps of opts; each is counted in [Cache.Stats]. Entries are otherwise kept verbatim: expiry needs an event time (see
// [Cache.Expire]) and digests are checked when an entry is replayed.
// Errors: [ErrCorrupt], [ErrFutureVersion], [ErrMigration]; b is never modified.
func DecodeCache(b []byte, opts CacheOptions) (*Cache, error) {
	c := NewCache(opts)
	if len(b) == 0 {
		return c, nil
	}
	blob := &pb.LlmCacheBlob{}
	if err := decodeVersioned(CellLLMCache, b, blob, opts.Schema, &c.stats); err != nil {
		return nil, err
	}
	c.blob = blob
	c.oldest = oldestCreated(blob.Entries)
	c.stripDigestOnly()
	c.repairTotal()
	var dropped []*pb.LlmCacheEntry
	blob.Entries, dropped = dedupeKeepLast(blob.Entries, (*pb.LlmCacheEntry).GetCacheKey)
	for _, e := range dropped {
		blob.TotalResponseBytes -= cacheEntrySize(e)
	}
	c.stats.DuplicatesDropped += int64(len(dropped))
	for _, e := range blob.Entries {
		if cacheEntrySize(e) > c.opts.MaxResponseBytes {
			blob.TotalResponseBytes -= cacheEntrySize(e)
			c.keepDigestOnly(e, sha256.Sum256(e.GetResponse()))
		}
	}
	c.evict()
	return c, nil
}

func (c *Cache) repairTotal() {
	var sum int64
	for _, e := range c.blob.Entries {
		sum += cacheEntrySize(e)
	}
	if sum != c.blob.TotalResponseBytes {
		c.blob.TotalResponseBytes = sum
		c.stats.TotalRepairs++
	}
}

// stripDigestOnly drops the response of every digest-only entry that carries one: such an
// entry is never replayed, and its bytes would count against the response cap.
func (c *Cache) stripDigestOnly() {
	for _, e := range c.blob.Entries {
		if e.GetDigestOnly() && len(e.GetResponse()) > 0 {
			e.Response = nil
			c.stats.TotalRepairs++
		}
	}
}

// keepDigestOnly records a response in e as its SHA-256 d only.
func (c *Cache) keepDigestOnly(e *pb.LlmCacheEntry, d [sha256.Size]byte) {
	e.Response, e.ResponseDigest, e.DigestOnly = nil, d[:], true
	c.stats.DigestOnly++
}

func (c *Cache) evict() {
	ownList(&c.owned, &c.blob.Entries)
	var n int
	var bytes int64
	c.blob.Entries, n, bytes = evictFront(c.blob.Entries, c.blob.TotalResponseBytes, cacheEntrySize, c.opts.MaxEntries, c.opts.MaxResponseBytes)
	c.blob.TotalResponseBytes -= bytes
	c.owned.evicted(n)
	c.stats.Evictions += int64(n)
	c.stats.EvictedBytes += bytes
}

func oldestCreated(entries []*pb.LlmCacheEntry) int64 {
	oldest := int64(math.MaxInt64)
	for _, e := range entries {
		oldest = min(oldest, e.GetCreatedAtMs())
	}
	return oldest
}

func cacheEntrySize(e *pb.LlmCacheEntry) int64 { return int64(len(e.GetResponse())) }

// Encode returns the deterministic bytes of the cell, unknown fields included.
func (c *Cache) Encode() ([]byte, error) { return encode(CellLLMCache, c.blob) }

// Len returns the number of entries, digest-only ones included.
func (c *Cache) Len() int { return len(c.blob.Entries) }

// TotalResponseBytes returns the exact sum of stored response lengths.
func (c *Cache) TotalResponseBytes() int64 { return c.blob.TotalResponseBytes }

// Options returns the bounds in force, defaults resolved.
func (c *Cache) Options() CacheOptions { return c.opts }

// Stats returns what was migrated, repaired, expired and evicted since decode.
func (c *Cache) Stats() Stats { return c.stats }

// Proto returns a copy of the blob.
func (c *Cache) Proto() *pb.LlmCacheBlob { return proto.Clone(c.blob).(*pb.LlmCacheBlob) }
