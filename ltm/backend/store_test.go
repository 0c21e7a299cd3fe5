package backend_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/bigtable/bttest"
	"github.com/jackc/pgx/v5"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/ltm/ltmtest"
)

func TestSQLite(t *testing.T) {
	ltmtest.Run(t, func(t *testing.T) ltm.Store {
		s, err := backend.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "ltm.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// One redis-server for the suite; each case's store has its own key prefix.
func TestRedis(t *testing.T) {
	url := "redis://" + testsvc.Redis(t) + "/0"
	var n atomic.Int64
	ltmtest.Run(t, func(t *testing.T) ltm.Store {
		s, err := backend.OpenRedis(context.Background(), backend.RedisOptions{URL: url, Prefix: fmt.Sprintf("case%d:", n.Add(1))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// One PostgreSQL server for the suite; each case's store has its own table.
func TestPostgres(t *testing.T) {
	url := testsvc.PostgresURL(t)
	var n atomic.Int64
	ltmtest.Run(t, func(t *testing.T) ltm.Store {
		s, err := backend.OpenPostgres(context.Background(), backend.PostgresOptions{URL: url, Table: fmt.Sprintf("case%d", n.Add(1))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// One in-process Bigtable server for the suite; each case's store has its own table.
func TestBigtable(t *testing.T) {
	addr := bigtableServer(t)
	var n atomic.Int64
	ltmtest.Run(t, func(t *testing.T) ltm.Store {
		table := fmt.Sprintf("case%d", n.Add(1))
		return backend.OpenBigtable(bigtableClient(t, addr, table), table)
	})
}

func bigtableServer(t testing.TB) string {
	t.Helper()
	srv, err := bttest.NewServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.Addr
}

// bigtableClient creates table (with the store's family) on the server at addr and returns
// a client of it, closed with the test.
func bigtableClient(t testing.TB, addr, table string) *bigtable.Client {
	t.Helper()
	ctx := context.Background()
	// Closing a client closes the connection it was given: one connection each.
	dial := func() option.ClientOption {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		return option.WithGRPCConn(conn)
	}
	admin, err := bigtable.NewAdminClient(ctx, "p", "i", dial())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := admin.CreateTable(ctx, table); err != nil {
		t.Fatal(err)
	}
	if err := admin.CreateColumnFamily(ctx, table, backend.BigtableFamily); err != nil {
		t.Fatal(err)
	}
	c, err := bigtable.NewClientWithConfig(ctx, "p", "i", bigtable.ClientConfig{MetricsProvider: bigtable.NoopMetricsProvider{}}, dial())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Open reaches every backend from its reference and refuses the unusable ones with ErrRef,
// never quoting a password.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	for _, ref := range []string{
		"", "sqlite", "sqlite:", "sqlite:a?mode=ro", "bbolt:x.db", "redis://user:hunter2@[::1", "redis://h:1/notadb",
		"bigtable:", "bigtable:projects/p/instances/i", "bigtable:projects/p/instances/i/tables/",
		"bigtable:projects/p/zones/i/tables/t", "postgres:ltm@h/db", "postgres://ltm:hunter2@h:notaport/db",
		"postgresql://ltm:hunter2@h/db?sslmode=bogus",
	} {
		_, err := backend.Open(ctx, ref)
		if !errors.Is(err, ltm.ErrRef) {
			t.Errorf("Open(%q): %v, want ErrRef", ref, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): %v quotes the password", ref, err)
		}
	}
	btAddr := bigtableServer(t)
	bigtableClient(t, btAddr, "t")
	t.Setenv("BIGTABLE_EMULATOR_HOST", btAddr)
	for _, ref := range []string{
		"sqlite:" + filepath.Join(t.TempDir(), "sub", "ltm.db"),
		"redis://" + testsvc.Redis(t) + "/2",
		testsvc.PostgresURL(t),
		"bigtable:projects/p/instances/i/tables/t",
	} {
		s, err := backend.Open(ctx, ref)
		if err != nil {
			t.Fatalf("Open(%q): %v", ref, err)
		}
		e := ltm.Entry{Entity: []byte("e"), Namespace: "n", Key: "k", Value: []byte("v"), Seq: 3}
		if err := s.Put(ctx, e); err != nil {
			t.Fatalf("%s: Put: %v", ref, err)
		}
		if got, ok, err := s.Get(ctx, e.Entity, e.Namespace, e.Key); err != nil || !ok || string(got.Value) != "v" {
			t.Fatalf("%s: Get = %+v %v %v", ref, got, ok, err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("%s: Close: %v", ref, err)
		}
	}
}

// A table name is spliced into statements: only a plain identifier is taken.
func TestPostgresTableName(t *testing.T) {
	for _, table := range []string{"x; DROP TABLE y", "Entries", "1st", strings.Repeat("t", 64)} {
		_, err := backend.OpenPostgres(context.Background(), backend.PostgresOptions{URL: "postgres://h/db", Table: table})
		if !errors.Is(err, ltm.ErrRef) {
			t.Errorf("table %q: %v, want ErrRef", table, err)
		}
	}
}

// The table docs/long-term-memory.md gives a database owner, run verbatim in a schema of its
// own, is the table the store creates: the store opens on it and keeps the guard.
func TestPostgresDocumentedTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/long-term-memory.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```sql\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/long-term-memory.md shows no sql block")
	}
	ctx := context.Background()
	url := testsvc.PostgresURL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{"CREATE SCHEMA documented", "CREATE SCHEMA created", "SET search_path = documented", string(m[1])} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, schema := range []string{"documented", "created"} {
		s, err := backend.OpenPostgres(ctx, backend.PostgresOptions{URL: url + "&search_path=" + schema})
		if err != nil {
			t.Fatal(err)
		}
		e := ltm.Entry{Entity: []byte("e"), Namespace: "n", Key: "k", Value: []byte("v"), Seq: 3}
		if err := s.Put(ctx, e); err != nil {
			t.Fatal(err)
		}
		e.Seq = 2
		if err := s.Put(ctx, e); !errors.Is(err, ltm.ErrStale) {
			t.Fatalf("%s: a stale Put: %v", schema, err)
		}
		s.Close()
	}
	columns := func(schema string) string {
		var cols string
		err := conn.QueryRow(ctx, `SELECT string_agg(column_name || ' ' || data_type || ' ' || is_nullable, ', ' ORDER BY ordinal_position)
FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'ltm_entries'`, schema).Scan(&cols)
		if err != nil {
			t.Fatal(err)
		}
		return cols
	}
	if doc, made := columns("documented"), columns("created"); doc != made {
		t.Fatalf("documented table (%s) is not the store's (%s)", doc, made)
	}
}
