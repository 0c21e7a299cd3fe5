package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/beamagents/beamagents/ltm"
)

// PostgresOptions configure the PostgreSQL store.
type PostgresOptions struct {
	// URL is postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?PARAMS] (or postgresql://),
	// with the driver's parameters (sslmode, search_path, pool_max_conns, …).
	URL string
	// Table holds the entries; default "ltm_entries". It is created when missing.
	Table string
}

// DefaultPostgresTable is the table of a store opened from a reference.
const DefaultPostgresTable = "ltm_entries"

// postgresTableName admits a plain SQL identifier only: the name is spliced into statements.
var postgresTableName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// postgresSchema is the one table: strings are stored as bytea, so keys order by their bytes
// whatever the database's collation.
const postgresSchema = `CREATE TABLE IF NOT EXISTS %[1]s (
  entity    bytea   NOT NULL,
  namespace bytea   NOT NULL,
  key       bytea   NOT NULL,
  seq       bigint  NOT NULL,
  live      boolean NOT NULL,
  value     bytea   NOT NULL,
  PRIMARY KEY (entity, namespace, key)
)`

// postgresWrite is the seq guard: one conditional upsert, which changes no row when the
// stored seq is higher. The conflicting row is locked before the condition is read, so
// concurrent writers of a key are ordered by it.
const postgresWrite = `INSERT INTO %[1]s AS t (entity, namespace, key, seq, live, value) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (entity, namespace, key) DO UPDATE SET seq = excluded.seq, live = excluded.live, value = excluded.value
WHERE excluded.seq >= t.seq`

// Postgres is the Store on a PostgreSQL database, shared by every worker, through the driver
// github.com/jackc/pgx/v5 and its connection pool.
type Postgres struct {
	pool                                 *pgxpool.Pool
	write, get, list, listTo, namespaces string
}

// OpenPostgres connects to PostgreSQL, checks it answers, and creates the table when missing.
func OpenPostgres(ctx context.Context, o PostgresOptions) (*Postgres, error) {
	if o.Table == "" {
		o.Table = DefaultPostgresTable
	}
	if !postgresTableName.MatchString(o.Table) {
		return nil, &ltm.Error{Code: ltm.CodeRef, Detail: fmt.Sprintf("postgres table %q is not a plain lower-case identifier", o.Table)}
	}
	cfg, err := parsePostgres(o.URL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, failed(err, "connecting to postgres at %s", cfg.ConnConfig.Host)
	}
	if err := createPostgresTable(ctx, pool, o.Table); err != nil {
		pool.Close()
		return nil, failed(err, "creating table %s at %s", o.Table, cfg.ConnConfig.Host)
	}
	t := o.Table
	return &Postgres{
		pool:       pool,
		write:      fmt.Sprintf(postgresWrite, t),
		get:        `SELECT seq, value FROM ` + t + ` WHERE entity = $1 AND namespace = $2 AND key = $3 AND live`,
		list:       `SELECT key, seq, value FROM ` + t + ` WHERE entity = $1 AND namespace = $2 AND live AND key >= $3 ORDER BY key LIMIT $4`,
		listTo:     `SELECT key, seq, value FROM ` + t + ` WHERE entity = $1 AND namespace = $2 AND live AND key >= $3 AND key < $5 ORDER BY key LIMIT $4`,
		namespaces: `SELECT DISTINCT namespace FROM ` + t + ` WHERE entity = $1 AND live ORDER BY namespace LIMIT $2`,
	}, nil
}

// parsePostgres reads a postgres:// or postgresql:// URL without connecting. The driver's
// message may quote the URL, password included: it is dropped.
func parsePostgres(url string) (*pgxpool.Config, error) {
	scheme, rest, _ := strings.Cut(url, ":")
	if (scheme != "postgres" && scheme != "postgresql") || !strings.HasPrefix(rest, "//") {
		return nil, errPostgresRef
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, errPostgresRef
	}
	return cfg, nil
}

var errPostgresRef = &ltm.Error{Code: ltm.CodeRef, Detail: "postgres reference: want postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?PARAMS]"}

// createPostgresTable creates the table under a transaction-scoped advisory lock: workers
// starting together would otherwise race in CREATE TABLE IF NOT EXISTS, which is not safe
// against a concurrent creation of the same table.
func createPostgresTable(ctx context.Context, pool *pgxpool.Pool, table string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "beamagents.ltm."+table); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, fmt.Sprintf(postgresSchema, table))
		return err
	})
}

func (s *Postgres) writeRow(ctx context.Context, entity []byte, namespace, key string, seq int64, live bool, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	tag, err := s.pool.Exec(ctx, s.write, entity, []byte(namespace), []byte(key), seq, live, value)
	switch {
	case err != nil:
		return failed(err, "writing key %q", key)
	case tag.RowsAffected() == 0:
		return stale(key, seq)
	}
	return nil
}

// Put implements Store.
func (s *Postgres) Put(ctx context.Context, e ltm.Entry) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	return s.writeRow(ctx, e.Entity, e.Namespace, e.Key, e.Seq, true, e.Value)
}

// Delete implements Store.
func (s *Postgres) Delete(ctx context.Context, entity []byte, namespace, key string, seq int64) error {
	if err := checkKey(entity, namespace, key); err != nil {
		return err
	}
	if err := checkSeq(seq); err != nil {
		return err
	}
	return s.writeRow(ctx, entity, namespace, key, seq, false, nil)
}

// Get implements Store.
func (s *Postgres) Get(ctx context.Context, entity []byte, namespace, key string) (ltm.Entry, bool, error) {
	if err := checkKey(entity, namespace, key); err != nil {
		return ltm.Entry{}, false, err
	}
	e := ltm.Entry{Entity: bytes.Clone(entity), Namespace: namespace, Key: key}
	err := s.pool.QueryRow(ctx, s.get, entity, []byte(namespace), []byte(key)).Scan(&e.Seq, &e.Value)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return ltm.Entry{}, false, nil
	case err != nil:
		return ltm.Entry{}, false, failed(err, "reading key %q", key)
	}
	return e, true, nil
}

// List implements Store.
func (s *Postgres) List(ctx context.Context, entity []byte, namespace, prefix string, limit int) ([]ltm.Entry, error) {
	if err := checkList(entity, namespace, prefix, limit); err != nil {
		return nil, err
	}
	q, args := s.list, []any{entity, []byte(namespace), []byte(prefix), limit}
	if end := prefixEnd([]byte(prefix)); end != nil {
		q, args = s.listTo, append(args, end)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, failed(err, "listing namespace %q", namespace)
	}
	var out []ltm.Entry
	var key []byte
	var e ltm.Entry
	_, err = pgx.ForEachRow(rows, []any{&key, &e.Seq, &e.Value}, func() error {
		out = append(out, ltm.Entry{Entity: bytes.Clone(entity), Namespace: namespace, Key: string(key), Seq: e.Seq, Value: bytes.Clone(e.Value)})
		return nil
	})
	if err != nil {
		return nil, failed(err, "listing namespace %q", namespace)
	}
	return out, nil
}

// Namespaces implements Store.
func (s *Postgres) Namespaces(ctx context.Context, entity []byte, limit int) ([]string, error) {
	if err := checkNamespaces(entity, limit); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.namespaces, entity, limit)
	if err != nil {
		return nil, failed(err, "listing namespaces")
	}
	var out []string
	var ns []byte
	if _, err := pgx.ForEachRow(rows, []any{&ns}, func() error {
		out = append(out, string(ns))
		return nil
	}); err != nil {
		return nil, failed(err, "listing namespaces")
	}
	return out, nil
}

// Close implements Store.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}
