package backend

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/beamagents/beamagents/ltm"
)

// sqliteSchema is the one table: strings are stored as BLOBs, so keys order by their bytes.
const sqliteSchema = `CREATE TABLE IF NOT EXISTS ltm_entries (
  entity    BLOB    NOT NULL,
  namespace BLOB    NOT NULL,
  key       BLOB    NOT NULL,
  seq       INTEGER NOT NULL,
  live      INTEGER NOT NULL,
  value     BLOB    NOT NULL,
  PRIMARY KEY (entity, namespace, key)
) WITHOUT ROWID`

// sqliteWrite is the seq guard: one conditional upsert, which changes no row when the stored
// seq is higher.
const sqliteWrite = `INSERT INTO ltm_entries (entity, namespace, key, seq, live, value) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (entity, namespace, key) DO UPDATE SET seq = excluded.seq, live = excluded.live, value = excluded.value
WHERE excluded.seq >= ltm_entries.seq`

// checkSQLitePath refuses a path the driver would misread.
func checkSQLitePath(path string) error {
	if strings.ContainsAny(path, "?#") {
		// The driver reads what follows them as its own options.
		return &ltm.Error{Code: ltm.CodeRef, Detail: fmt.Sprintf("sqlite path %q holds ? or #", path)}
	}
	return nil
}

// SQLite is the embedded Store on a SQLite file (the pure-Go driver modernc.org/sqlite): the
// default for one machine. The file is in WAL mode, so reads do not wait for writes, and
// writers wait for each other up to a busy timeout.
type SQLite struct{ db *sql.DB }

// OpenSQLite opens (creating) the SQLite file at path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	if err := checkSQLitePath(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, failed(err, "creating the directory of %s", path)
	}
	q := url.Values{"_pragma": {"busy_timeout(10000)", "journal_mode(WAL)"}}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, failed(err, "opening %s", path)
	}
	if _, err := db.ExecContext(ctx, sqliteSchema); err != nil {
		db.Close()
		return nil, failed(err, "creating the table in %s", path)
	}
	return &SQLite{db: db}, nil
}

func (s *SQLite) write(ctx context.Context, entity []byte, namespace, key string, seq int64, live bool, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	res, err := s.db.ExecContext(ctx, sqliteWrite, entity, []byte(namespace), []byte(key), seq, live, value)
	if err != nil {
		return failed(err, "writing key %q", key)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return failed(err, "writing key %q", key)
	}
	if n == 0 {
		return stale(key, seq)
	}
	return nil
}

// Put implements Store.
func (s *SQLite) Put(ctx context.Context, e ltm.Entry) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	return s.write(ctx, e.Entity, e.Namespace, e.Key, e.Seq, true, e.Value)
}

// Delete implements Store.
func (s *SQLite) Delete(ctx context.Context, entity []byte, namespace, key string, seq int64) error {
	if err := checkKey(entity, namespace, key); err != nil {
		return err
	}
	if err := checkSeq(seq); err != nil {
		return err
	}
	return s.write(ctx, entity, namespace, key, seq, false, nil)
}

// Get implements Store.
func (s *SQLite) Get(ctx context.Context, entity []byte, namespace, key string) (ltm.Entry, bool, error) {
	if err := checkKey(entity, namespace, key); err != nil {
		return ltm.Entry{}, false, err
	}
	e := ltm.Entry{Entity: bytes.Clone(entity), Namespace: namespace, Key: key}
	err := s.db.QueryRowContext(ctx,
		`SELECT seq, value FROM ltm_entries WHERE entity = ? AND namespace = ? AND key = ? AND live`,
		entity, []byte(namespace), []byte(key)).Scan(&e.Seq, &e.Value)
	switch {
	case err == sql.ErrNoRows:
		return ltm.Entry{}, false, nil
	case err != nil:
		return ltm.Entry{}, false, failed(err, "reading key %q", key)
	}
	return e, true, nil
}

// List implements Store.
func (s *SQLite) List(ctx context.Context, entity []byte, namespace, prefix string, limit int) ([]ltm.Entry, error) {
	if err := checkList(entity, namespace, prefix, limit); err != nil {
		return nil, err
	}
	q := `SELECT key, seq, value FROM ltm_entries WHERE entity = ? AND namespace = ? AND live AND key >= ?`
	args := []any{entity, []byte(namespace), []byte(prefix)}
	if end := prefixEnd([]byte(prefix)); end != nil {
		q += ` AND key < ?`
		args = append(args, end)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY key LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, failed(err, "listing namespace %q", namespace)
	}
	defer rows.Close()
	var out []ltm.Entry
	for rows.Next() {
		e := ltm.Entry{Entity: bytes.Clone(entity), Namespace: namespace}
		var key []byte
		if err := rows.Scan(&key, &e.Seq, &e.Value); err != nil {
			return nil, failed(err, "listing namespace %q", namespace)
		}
		e.Key = string(key)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, failed(err, "listing namespace %q", namespace)
	}
	return out, nil
}

// Namespaces implements Store.
func (s *SQLite) Namespaces(ctx context.Context, entity []byte, limit int) ([]string, error) {
	if err := checkNamespaces(entity, limit); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT namespace FROM ltm_entries WHERE entity = ? AND live ORDER BY namespace LIMIT ?`, entity, limit)
	if err != nil {
		return nil, failed(err, "listing namespaces")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var ns []byte
		if err := rows.Scan(&ns); err != nil {
			return nil, failed(err, "listing namespaces")
		}
		out = append(out, string(ns))
	}
	if err := rows.Err(); err != nil {
		return nil, failed(err, "listing namespaces")
	}
	return out, nil
}

// Close implements Store.
func (s *SQLite) Close() error { return s.db.Close() }
