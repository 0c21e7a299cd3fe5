// Package ltm is agents' long-term memory: entries that outlive a key's keyed state (whose
// working memory is capped and cleared when the key idles), kept in a Store shared by every
// worker. An entry is a value under a key, in a namespace, of an entity, stamped with the seq
// of the activation that wrote it. This package holds the contract only (Store, Entry, the
// bounds and the errors), so the activation core that calls a Store links no backend. The
// backends are package ltm/backend's: SQLite (embedded, the default for one machine), Redis,
// PostgreSQL and Cloud Bigtable, each opened from a reference by backend.Open. Package
// ltm/ltmtest is the conformance suite every backend passes. docs/long-term-memory.md states
// the rules.
//
// Invariants:
//   - Seq guard. A Put or Delete whose seq is below the seq stored for its key is refused
//     with ErrStale and writes nothing; an equal seq rewrites (the same activation, retried,
//     writes what it wrote before). A replayed or retried activation therefore never writes
//     an older value over a newer one.
//   - Tombstones. Delete stores a tombstone with its seq (also for a key never written), so a
//     stale Put after a Delete is refused too. Get and List never return a tombstone, and a
//     List's limit counts live entries only. Tombstones are kept.
//   - Atomicity. Each backend checks the guard and writes in one atomic step (a SQLite or
//     PostgreSQL conditional upsert, a Redis Lua script, a Bigtable CheckAndMutateRow), so
//     concurrent writers of one key end with the highest seq's write, whatever their order.
//   - Isolation. (entity, namespace, key) names an entry; entities and namespaces that are
//     byte prefixes of each other never share entries.
//   - Order. List returns entries in ascending byte order of key, those starting with the
//     prefix only.
//   - Bounds. Entity, namespace, key, prefix, value and list limit are checked before a
//     backend is reached: ErrBounds over a bound, ErrInvalid for what no bound admits (an
//     empty entity, namespace or key; text that is not UTF-8; a negative seq; a limit below
//     1). A refused call writes nothing.
//   - Errors are *Error values with stable codes (errors.Is on the sentinels): ErrStale,
//     ErrBounds, ErrInvalid, ErrCorrupt, ErrFailed, ErrRef. An error never quotes a
//     reference, which may hold a password.
package ltm
