// Package statecodec encodes and decodes the keyed state of one entity key, cell by cell, and
// keeps working memory and the model replay cache within their bounds.
//
// # State cells
//
// Each cell is a Beam value-state cell of []byte holding our own encoding, never a Beam
// coder: the automatic proto coder embeds Go import paths in its spec, which would make a
// pipeline --update depend on package paths. The state ids and their encodings are:
//
//	id               value                                   encoding
//	seq.v1           the key's next activation number        `message Seq { int64 next = 1; }`
//	memory.v1        working memory                          beam_agents.v1.MemoryBlob
//	llm_cache.v1     model replay cache                      beam_agents.v1.LlmCacheBlob
//	continuation.v1  suspension state (empty: not suspended) beam_agents.v1.Continuation
//	pending.v1       intents awaiting a result or approval   `message PendingIntents { repeated ToolIntent intents = 1; }`
//
// An empty cell always means "never written": seq 0, empty memory, empty cache, not suspended,
// nothing pending.
//
// STABLE API: the ids above and their encodings are part of the pipeline's update contract
// (pipeline --update restores state by id), and the blob encodings are the wire format shared
// with the Python runtime. They are never renamed or re-encoded. The ".v1" suffix versions the
// cell's encoding, not its content: the three versioned blobs evolve inside their cells
// through state_schema_version and package migrate, keeping their ids. A cell whose encoding
// must change gets a new id, and the pipeline moves the old cell's content into it explicitly.
//
// The codecs work per cell; package agent lists the cells it uses (these and its inbox) in one
// table, and package transforms keeps them combined in one Beam cell, "agent_state.v1", whose
// encoding (AgentStateCells) carries each cell's bytes unchanged. The rules, the wire format
// and the diagnostic codes are written out in docs/wire-and-state.md.
//
// # Invariants
//
//   - Decoding is parse → version check → migrate → verify. Corrupt bytes give a typed
//     [*Error] naming the cell ([ErrCorrupt]), a blob from a newer binary gives
//     [ErrFutureVersion], and a failed migration [ErrMigration]; decoding never panics and
//     never modifies its input, so a refused cell stays exactly as committed.
//   - Every constructor stamps the current version of its options' state schema (a
//     migrate.Registry; by default migrate.Default(), whose version is
//     migrate.CurrentStateSchemaVersion), and every decoded versioned blob is migrated to it,
//     so encoding always writes that version. A blob decoded at version 0 is upgraded
//     explicitly and counted as pre-versioned.
//   - Encoding is deterministic, and unknown fields (written by a newer binary within the same
//     schema version) are re-emitted, never dropped.
//   - Entry order is LRU order, least recently used first, for memory and cache alike;
//     last_access_ms, created_at_ms and every other time is an event time passed in by the
//     caller. Nothing in this package reads the wall clock.
//   - total_value_bytes and total_response_bytes are exact after decode and after every
//     operation; a stored total that disagrees with its entries is recomputed and counted.
//   - Caps hold after decode and after every operation: memory by value bytes and key count,
//     the cache by entry count, TTL and response bytes, evicting least recently used first.
//     The entry just written is never the one evicted; a value that can never fit is refused
//     (memory) or kept as its SHA-256 only (cache).
//   - Repairs, migrations, evictions and expiries are reported in [Stats], which the Beam
//     layer turns into counters; this package does not import Beam.
//   - A decoded memory or cache can be cloned in constant time ([Memory.Clone],
//     [Cache.Clone]): the two share the entry list and the entries copy-on-write (the first
//     change to the list costs a copy of it), so a change to either never shows in the other,
//     and either encodes exactly as the other would after the same operations.
package statecodec
