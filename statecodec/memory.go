package statecodec

import (
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

// Memory defaults.
const (
	DefaultMemoryMaxValueBytes int64 = 100 << 10 // 100 KiB of values
	DefaultMemoryMaxEntries    int   = 1024
)

// MemoryOptions bound working memory. The zero value selects the defaults.
type MemoryOptions struct {
	// MaxValueBytes caps total_value_bytes (the sum of value lengths); ≤ 0 selects
	// DefaultMemoryMaxValueBytes.
	MaxValueBytes int64
	// MaxEntries caps the number of keys; ≤ 0 selects DefaultMemoryMaxEntries.
	MaxEntries int
	// Schema is the state schema the memory is stamped with and migrated to; nil selects
	// migrate.Default(), the schema of this build.
	Schema *migrate.Registry
}

func (o MemoryOptions) resolved() MemoryOptions {
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMemoryMaxValueBytes
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMemoryMaxEntries
	}
	return o
}

// Memory is one key's working memory (cell [CellMemory]): a MemoryBlob kept within its caps,
// with entries in LRU order and total_value_bytes exact after every operation. A Memory is
// not safe for concurrent use; a keyed DoFn owns one per activation.
type Memory struct {
	blob  *pb.MemoryBlob
	opts  MemoryOptions
	stats Stats
	owned shared // see Clone
}

// NewMemory returns an empty memory stamped with the current version of opts.Schema.
func NewMemory(opts MemoryOptions) *Memory {
	return &Memory{blob: &pb.MemoryBlob{StateSchemaVersion: schemaOf(opts.Schema).Current()}, opts: opts.resolved()}
}

// DecodeMemory decodes a [CellMemory] cell: parse, version check, migrate, then verify. Empty
// bytes (a cell never written) give an empty memory. A stored total that disagrees with the
// entries is recomputed, a key that appears twice keeps its later (more recent) entry, and a
// blob over the caps of opts is evicted down to them; each is counted in [Memory.Stats].
// Errors: [ErrCorrupt], [ErrFutureVersion], [ErrMigration]; b is never modified.
func DecodeMemory(b []byte, opts MemoryOptions) (*Memory, error) {
	m := NewMemory(opts)
	if len(b) == 0 {
		return m, nil
	}
	blob := &pb.MemoryBlob{}
	if err := decodeVersioned(CellMemory, b, blob, opts.Schema, &m.stats); err != nil {
		return nil, err
	}
	m.blob = blob
	m.repairTotal()
	var dropped []*pb.MemoryEntry
	blob.Entries, dropped = dedupeKeepLast(blob.Entries, (*pb.MemoryEntry).GetKey)
	for _, e := range dropped {
		blob.TotalValueBytes -= int64(len(e.GetValue()))
	}
	m.stats.DuplicatesDropped += int64(len(dropped))
	m.evict()
	return m, nil
}

func (m *Memory) repairTotal() {
	var sum int64
	for _, e := range m.blob.Entries {
		sum += int64(len(e.GetValue()))
	}
	if sum != m.blob.TotalValueBytes {
		m.blob.TotalValueBytes = sum
		m.stats.TotalRepairs++
	}
}

func (m *Memory) evict() {
	ownList(&m.owned, &m.blob.Entries)
	var n int
	var bytes int64
	m.blob.Entries, n, bytes = evictFront(m.blob.Entries, m.blob.TotalValueBytes, memoryEntrySize, m.opts.MaxEntries, m.opts.MaxValueBytes)
	m.blob.TotalValueBytes -= bytes
	m.owned.evicted(n)
	m.stats.Evictions += int64(n)
	m.stats.EvictedBytes += bytes
}

func memoryEntrySize(e *pb.MemoryEntry) int64 { return int64(len(e.GetValue())) }

// Encode returns the deterministic bytes of the cell, unknown fields included.
func (m *Memory) Encode() ([]byte, error) { return encode(CellMemory, m.blob) }

// Len returns the number of entries.
func (m *Memory) Len() int { return len(m.blob.Entries) }

// TotalValueBytes returns the exact sum of value lengths.
func (m *Memory) TotalValueBytes() int64 { return m.blob.TotalValueBytes }

// Options returns the caps in force, defaults resolved.
func (m *Memory) Options() MemoryOptions { return m.opts }

// Stats returns what was migrated, repaired and evicted since decode.
func (m *Memory) Stats() Stats { return m.stats }

// Proto returns a copy of the blob.
func (m *Memory) Proto() *pb.MemoryBlob { return proto.Clone(m.blob).(*pb.MemoryBlob) }
