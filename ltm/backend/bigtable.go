package backend

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"cloud.google.com/go/bigtable"

	"github.com/beamagents/beamagents/ltm"
)

// Bigtable layout: one row per (entity, namespace, key), its row key the scope key followed
// by the key's bytes (so a key prefix is a row-key prefix and rows come in key order), one
// cell holding the record in column BigtableFamily:bigtableColumn. The table and its family
// are created by whoever provisions the table (family BigtableFamily, one version kept),
// not by the store.
const (
	// BigtableFamily is the column family the table must have.
	BigtableFamily = "m"
	bigtableColumn = "r"
)

// Bigtable is the Store on a Cloud Bigtable table. A write is one CheckAndMutateRow whose
// predicate matches a stored record of a higher seq (a value range on the record bytes):
// when it matches nothing is written and the write is stale.
type Bigtable struct {
	c   *bigtable.Client
	tbl *bigtable.Table
}

// OpenBigtable uses table of an open client; Close closes the client.
func OpenBigtable(c *bigtable.Client, table string) *Bigtable {
	return &Bigtable{c: c, tbl: c.Open(table)}
}

// openBigtableRef opens projects/P/instances/I/tables/T with the default credentials (or the
// emulator named by BIGTABLE_EMULATOR_HOST).
func openBigtableRef(ctx context.Context, name string) (*Bigtable, error) {
	parts, err := bigtableName(name)
	if err != nil {
		return nil, err
	}
	c, err := bigtable.NewClient(ctx, parts[1], parts[3])
	if err != nil {
		return nil, failed(err, "connecting to bigtable %s", name)
	}
	return OpenBigtable(c, parts[5]), nil
}

// bigtableName splits projects/P/instances/I/tables/T at its slashes.
func bigtableName(name string) ([]string, error) {
	parts := strings.Split(name, "/")
	if len(parts) != 6 || parts[0] != "projects" || parts[2] != "instances" || parts[4] != "tables" ||
		parts[1] == "" || parts[3] == "" || parts[5] == "" {
		return nil, &ltm.Error{Code: ltm.CodeRef, Detail: fmt.Sprintf("bigtable reference %q: want bigtable:projects/P/instances/I/tables/T", name)}
	}
	return parts, nil
}

// readFilter keeps the record cell only, latest version.
var readFilter = bigtable.RowFilter(bigtable.ChainFilters(
	bigtable.FamilyFilter(BigtableFamily), bigtable.ColumnFilter(bigtableColumn), bigtable.LatestNFilter(1)))

func rowKey(entity []byte, namespace, key string) string {
	return string(scopeKey(entity, namespace)) + key
}

func (s *Bigtable) write(ctx context.Context, entity []byte, namespace, key string, r record) error {
	m := bigtable.NewMutation()
	m.DeleteCellsInColumn(BigtableFamily, bigtableColumn)
	m.Set(BigtableFamily, bigtableColumn, 0, encodeRecord(r))
	if r.seq < math.MaxInt64 {
		// Stale when the stored record is at or above seq+1 in byte order.
		above := binary.BigEndian.AppendUint64(nil, uint64(r.seq+1))
		m = bigtable.NewCondMutation(bigtable.ChainFilters(
			bigtable.FamilyFilter(BigtableFamily), bigtable.ColumnFilter(bigtableColumn),
			bigtable.ValueRangeFilter(above, nil)), nil, m)
	}
	var higher bool
	if err := s.tbl.Apply(ctx, rowKey(entity, namespace, key), m, bigtable.GetCondMutationResult(&higher)); err != nil {
		return failed(err, "writing key %q", key)
	}
	if higher {
		return stale(key, r.seq)
	}
	return nil
}

// Put implements Store.
func (s *Bigtable) Put(ctx context.Context, e ltm.Entry) error {
	if err := checkEntry(e); err != nil {
		return err
	}
	return s.write(ctx, e.Entity, e.Namespace, e.Key, record{seq: e.Seq, live: true, value: e.Value})
}

// Delete implements Store.
func (s *Bigtable) Delete(ctx context.Context, entity []byte, namespace, key string, seq int64) error {
	if err := checkKey(entity, namespace, key); err != nil {
		return err
	}
	if err := checkSeq(seq); err != nil {
		return err
	}
	return s.write(ctx, entity, namespace, key, record{seq: seq})
}

// Get implements Store.
func (s *Bigtable) Get(ctx context.Context, entity []byte, namespace, key string) (ltm.Entry, bool, error) {
	if err := checkKey(entity, namespace, key); err != nil {
		return ltm.Entry{}, false, err
	}
	row, err := s.tbl.ReadRow(ctx, rowKey(entity, namespace, key), readFilter)
	if err != nil {
		return ltm.Entry{}, false, failed(err, "reading key %q", key)
	}
	cells := row[BigtableFamily]
	if len(cells) == 0 {
		return ltm.Entry{}, false, nil
	}
	return entryOf(entity, namespace, key, cells[0].Value)
}

// List implements Store. Tombstones are rows too: the scan skips them and stops at the
// limit-th live entry.
func (s *Bigtable) List(ctx context.Context, entity []byte, namespace, prefix string, limit int) ([]ltm.Entry, error) {
	if err := checkList(entity, namespace, prefix, limit); err != nil {
		return nil, err
	}
	scope := scopeKey(entity, namespace)
	var out []ltm.Entry
	var bad error
	err := s.tbl.ReadRows(ctx, bigtable.PrefixRange(string(scope)+prefix), func(row bigtable.Row) bool {
		cells := row[BigtableFamily]
		if len(cells) == 0 {
			return true
		}
		key, ok := bytes.CutPrefix([]byte(row.Key()), scope)
		if !ok {
			bad = corrupt("row %q is outside its scope", row.Key())
			return false
		}
		e, live, err := entryOf(entity, namespace, string(key), cells[0].Value)
		if err != nil {
			bad = err
			return false
		}
		if live {
			out = append(out, e)
		}
		return len(out) < limit
	}, readFilter)
	if bad != nil {
		return nil, bad
	}
	if err != nil {
		return nil, failed(err, "listing namespace %q", namespace)
	}
	return out, nil
}

// Namespaces implements Store. Row keys order namespaces by length first, so it finds every
// namespace of the entity (one read from the start of each to its first live entry, then a
// skip to the next), then sorts them and keeps the first limit.
func (s *Bigtable) Namespaces(ctx context.Context, entity []byte, limit int) ([]string, error) {
	if err := checkNamespaces(entity, limit); err != nil {
		return nil, err
	}
	scope := binary.AppendUvarint(nil, uint64(len(entity)))
	scope = append(scope, entity...)
	end := prefixEnd(scope)
	var out []string
	for start := scope; ; {
		ns, found, next, err := s.nextNamespace(ctx, scope, start, end)
		if err != nil {
			return nil, err
		}
		if !found {
			break
		}
		out = append(out, ns)
		if next == nil {
			break
		}
		start = next
	}
	slices.Sort(out)
	return out[:min(limit, len(out))], nil
}

// nextNamespace finds the first live entry at or after row start within the entity's rows
// (scope, up to end): its namespace and the first row key after that namespace's rows (nil
// when no row key is after them).
func (s *Bigtable) nextNamespace(ctx context.Context, scope, start, end []byte) (ns string, found bool, next []byte, err error) {
	var bad error
	rr := bigtable.NewRange(string(start), string(end))
	if end == nil {
		rr = bigtable.InfiniteRange(string(start))
	}
	err = s.tbl.ReadRows(ctx, rr, func(row bigtable.Row) bool {
		rest, ok := bytes.CutPrefix([]byte(row.Key()), scope)
		n, w := binary.Uvarint(rest)
		if !ok || w <= 0 || uint64(len(rest)-w) < n {
			bad = corrupt("row %q is outside its scope", row.Key())
			return false
		}
		name := string(rest[w : w+int(n)])
		cells := row[BigtableFamily]
		if len(cells) == 0 {
			return true
		}
		r, derr := decodeRecord(cells[0].Value)
		if derr != nil {
			bad = &ltm.Error{Code: ltm.CodeCorrupt, Detail: fmt.Sprintf("namespace %q", name), Err: derr}
			return false
		}
		if r.live {
			ns, found, next = name, true, prefixEnd([]byte(row.Key())[:len(scope)+w+int(n)])
			return false
		}
		return true
	}, readFilter)
	if bad != nil {
		return "", false, nil, bad
	}
	if err != nil {
		return "", false, nil, failed(err, "listing namespaces")
	}
	return ns, found, next, nil
}

// Close implements Store.
func (s *Bigtable) Close() error { return s.c.Close() }
