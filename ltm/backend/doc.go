// Package backend holds the long-term memory stores behind package ltm's Store: SQLite
// (embedded; the default for one machine), Redis, PostgreSQL and Cloud Bigtable, each opened
// from a reference by Open, and each passing the conformance suite of package ltm/ltmtest. It
// keeps the invariants package ltm states: each checks the seq guard and writes in one atomic
// step (a SQLite or PostgreSQL conditional upsert, a Redis Lua script, a Bigtable
// CheckAndMutateRow), checks an entry's bounds before reaching its backend, and never quotes a
// reference in an error. CheckRef checks a reference's form without opening it, and Resolve
// reads a store reference given behind a secret reference (env:, file:, gcpsm:; package
// internal/secretref), as a run's --memory_store may be, since a Redis or PostgreSQL
// reference carries its password. Redis and Bigtable store one record layout (record.go);
// SQLite and PostgreSQL one table of the same columns. docs/long-term-memory.md states the
// rules.
package backend
