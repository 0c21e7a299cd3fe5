package statecodec

import (
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/migrate"
)

// Cell is the state id of one keyed-state cell. Ids and the encodings they name are stable
// API (see the package documentation).
type Cell string

// State ids.
const (
	CellSeq          Cell = "seq.v1"          // the key's next activation number
	CellMemory       Cell = "memory.v1"       // working memory, a MemoryBlob
	CellLLMCache     Cell = "llm_cache.v1"    // the model replay cache, an LlmCacheBlob
	CellContinuation Cell = "continuation.v1" // suspension state, a Continuation; empty when not suspended
	CellPending      Cell = "pending.v1"      // intents awaiting a result or an approval
)

// marshal is deterministic so that the same value always commits the same bytes; unknown
// fields (written by a newer binary within the same version) are re-emitted, never dropped.
var marshal = proto.MarshalOptions{Deterministic: true}

// schemaOf returns r, or the built-in schema's registry when r is nil.
func schemaOf(r *migrate.Registry) *migrate.Registry {
	if r == nil {
		return migrate.Default()
	}
	return r
}

// decodeVersioned parses b into m, then checks and migrates its version to the schema's
// current one: parse → version check → migrate. It records what migration did in st.
func decodeVersioned(cell Cell, b []byte, m proto.Message, schema *migrate.Registry, st *Stats) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return &Error{Code: CodeCorrupt, Cell: cell, Err: err}
	}
	res, err := schemaOf(schema).Migrate(m)
	switch {
	case errors.Is(err, migrate.ErrFutureVersion):
		return &Error{Code: CodeFutureVersion, Cell: cell, Err: err}
	case err != nil:
		return &Error{Code: CodeMigration, Cell: cell, Err: err}
	}
	if res.Migrated() {
		st.Migrated++
	}
	if res.PreVersioned() {
		st.PreVersioned++
	}
	return nil
}

func encode(cell Cell, m proto.Message) ([]byte, error) {
	b, err := marshal.Marshal(m)
	if err != nil {
		return nil, &Error{Code: CodeEncode, Cell: cell, Err: err}
	}
	return b, nil
}
