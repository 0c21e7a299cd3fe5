// Package ltmtest is the conformance suite of package ltm's stores: every backend's test runs
// it, and a backend that fails it does not ship.
package ltmtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/beamagents/beamagents/ltm"
)

// Run runs every case of the suite on a fresh store from open (one per case); open registers
// the store's cleanup with t.
func Run(t *testing.T, open func(t *testing.T) ltm.Store) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.run(&suite{t: t, s: open(t), ctx: context.Background()})
		})
	}
}

var cases = []struct {
	name string
	run  func(*suite)
}{
	{"RoundTrip", roundTrip},
	{"ListOrderAndPrefix", listOrderAndPrefix},
	{"StalePutRefused", stalePutRefused},
	{"StaleDeleteRefused", staleDeleteRefused},
	{"Tombstones", tombstones},
	{"EqualSeqRewrites", equalSeqRewrites},
	{"Bounds", boundsRefused},
	{"ConcurrentWritersHighestWins", concurrentWriters},
	{"Isolation", isolation},
	{"Namespaces", namespaces},
}

// suite is one case's store and its helpers.
type suite struct {
	t   *testing.T
	s   ltm.Store
	ctx context.Context
}

var ent = []byte("entity-1")

const ns = "notes"

func (x *suite) put(key, value string, seq int64) {
	x.t.Helper()
	if err := x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: key, Value: []byte(value), Seq: seq}); err != nil {
		x.t.Fatalf("Put(%q, seq %d): %v", key, seq, err)
	}
}

func (x *suite) del(key string, seq int64) {
	x.t.Helper()
	if err := x.s.Delete(x.ctx, ent, ns, key, seq); err != nil {
		x.t.Fatalf("Delete(%q, seq %d): %v", key, seq, err)
	}
}

// want checks key's live value and seq; value "" with seq -1 means absent.
func (x *suite) want(entity []byte, namespace, key, value string, seq int64) {
	x.t.Helper()
	e, ok, err := x.s.Get(x.ctx, entity, namespace, key)
	switch {
	case err != nil:
		x.t.Fatalf("Get(%q): %v", key, err)
	case seq < 0 && ok:
		x.t.Fatalf("Get(%q) = %q seq %d, want absent", key, e.Value, e.Seq)
	case seq < 0:
		return
	case !ok:
		x.t.Fatalf("Get(%q) absent, want %q seq %d", key, value, seq)
	case string(e.Value) != value || e.Seq != seq || e.Key != key || e.Namespace != namespace || !bytes.Equal(e.Entity, entity):
		x.t.Fatalf("Get(%q) = %+v, want value %q seq %d", key, e, value, seq)
	}
}

func (x *suite) wantIs(err, target error, what string) {
	x.t.Helper()
	if !errors.Is(err, target) {
		x.t.Fatalf("%s: %v, want %v", what, err, target)
	}
}

// list returns the keys of a List.
func (x *suite) list(entity []byte, namespace, prefix string, limit int) []string {
	x.t.Helper()
	es, err := x.s.List(x.ctx, entity, namespace, prefix, limit)
	if err != nil {
		x.t.Fatalf("List(%q, %d): %v", prefix, limit, err)
	}
	keys := []string{}
	for _, e := range es {
		if !bytes.Equal(e.Entity, entity) || e.Namespace != namespace {
			x.t.Fatalf("List(%q) returned %+v of another scope", prefix, e)
		}
		keys = append(keys, e.Key)
	}
	return keys
}

func roundTrip(x *suite) {
	x.want(ent, ns, "k", "", -1)
	x.put("k", "v1", 1)
	x.want(ent, ns, "k", "v1", 1)
	x.put("k", "v2", 7)
	x.want(ent, ns, "k", "v2", 7)
	for _, v := range []string{"", "\x00\xff binary\x00", strings.Repeat("z", ltm.MaxValueBytes)} {
		x.put("bin", v, 8)
		x.want(ent, ns, "bin", v, 8)
	}
	x.put("max", "top", math.MaxInt64)
	x.want(ent, ns, "max", "top", math.MaxInt64)
	x.wantIs(x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: "max", Seq: math.MaxInt64 - 1}), ltm.ErrStale, "Put below MaxInt64")
	x.put("max", "again", math.MaxInt64)
	x.want(ent, ns, "max", "again", math.MaxInt64)
}

func listOrderAndPrefix(x *suite) {
	keys := []string{"b", "a", "ab", "a/2", "a/1", "c", "é", "a\x7f", "B", "a/10"}
	for i, j := range rand.New(rand.NewPCG(1, 2)).Perm(len(keys)) {
		x.put(keys[j], "v"+keys[j], int64(i))
	}
	for _, tc := range []struct {
		prefix string
		limit  int
		want   []string
	}{
		{"", 100, []string{"B", "a", "a/1", "a/10", "a/2", "ab", "a\x7f", "b", "c", "é"}},
		{"", 3, []string{"B", "a", "a/1"}},
		{"a", 100, []string{"a", "a/1", "a/10", "a/2", "ab", "a\x7f"}},
		{"a/", 2, []string{"a/1", "a/10"}},
		{"a/1", 100, []string{"a/1", "a/10"}},
		{"ab", 100, []string{"ab"}},
		{"\xc3", 100, nil}, // not UTF-8: refused below
		{"é", 100, []string{"é"}},
		{"d", 100, []string{}},
		{"abc", 100, []string{}},
	} {
		if tc.want == nil {
			_, err := x.s.List(x.ctx, ent, ns, tc.prefix, tc.limit)
			x.wantIs(err, ltm.ErrInvalid, fmt.Sprintf("List(%q)", tc.prefix))
			continue
		}
		if got := x.list(ent, ns, tc.prefix, tc.limit); !slices.Equal(got, tc.want) {
			x.t.Errorf("List(%q, %d) = %q, want %q", tc.prefix, tc.limit, got, tc.want)
		}
	}
	// Tombstones are not listed, and the limit counts live entries only.
	x.del("a/1", 20)
	x.del("a/10", 20)
	if got, want := x.list(ent, ns, "a", 2), []string{"a", "a/2"}; !slices.Equal(got, want) {
		x.t.Errorf("List after deletes = %q, want %q", got, want)
	}
	es, err := x.s.List(x.ctx, ent, ns, "b", 1)
	if err != nil || len(es) != 1 || string(es[0].Value) != "vb" || es[0].Seq < 0 {
		x.t.Errorf("List(b) = %+v, %v", es, err)
	}
}

func stalePutRefused(x *suite) {
	x.put("k", "new", 5)
	x.wantIs(x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: "k", Value: []byte("old"), Seq: 4}), ltm.ErrStale, "Put seq 4 over seq 5")
	x.wantIs(x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: "k", Value: []byte("old"), Seq: 0}), ltm.ErrStale, "Put seq 0 over seq 5")
	x.want(ent, ns, "k", "new", 5)
}

func staleDeleteRefused(x *suite) {
	x.put("k", "new", 5)
	x.wantIs(x.s.Delete(x.ctx, ent, ns, "k", 4), ltm.ErrStale, "Delete seq 4 of seq 5")
	x.want(ent, ns, "k", "new", 5)
	if got := x.list(ent, ns, "", 10); !slices.Equal(got, []string{"k"}) {
		x.t.Errorf("List = %q after a refused delete", got)
	}
}

func tombstones(x *suite) {
	x.put("k", "v", 5)
	x.del("k", 6)
	x.want(ent, ns, "k", "", -1)
	x.wantIs(x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: "k", Value: []byte("v"), Seq: 5}), ltm.ErrStale, "Put seq 5 after Delete seq 6")
	x.wantIs(x.s.Delete(x.ctx, ent, ns, "k", 5), ltm.ErrStale, "Delete seq 5 after Delete seq 6")
	x.want(ent, ns, "k", "", -1)
	x.put("k", "back", 7)
	x.want(ent, ns, "k", "back", 7)
	// A delete of a key never written leaves a tombstone too.
	x.del("never", 3)
	x.want(ent, ns, "never", "", -1)
	x.wantIs(x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: "never", Seq: 2}), ltm.ErrStale, "Put seq 2 after Delete seq 3")
	if got := x.list(ent, ns, "", 10); !slices.Equal(got, []string{"k"}) {
		x.t.Errorf("List = %q, want only the live key", got)
	}
}

func equalSeqRewrites(x *suite) {
	x.put("k", "v", 5)
	x.put("k", "v", 5)
	x.want(ent, ns, "k", "v", 5)
	x.put("k", "w", 5)
	x.want(ent, ns, "k", "w", 5)
	x.del("k", 5)
	x.del("k", 5)
	x.want(ent, ns, "k", "", -1)
	x.put("k", "again", 5)
	x.want(ent, ns, "k", "again", 5)
}

func boundsRefused(x *suite) {
	long := func(n int) string { return strings.Repeat("x", n) }
	ok := ltm.Entry{Entity: ent, Namespace: ns, Key: "k", Value: []byte("v"), Seq: 1}
	with := func(f func(*ltm.Entry)) ltm.Entry { e := ok; f(&e); return e }
	for _, tc := range []struct {
		name string
		e    ltm.Entry
		want error
	}{
		{"empty entity", with(func(e *ltm.Entry) { e.Entity = nil }), ltm.ErrInvalid},
		{"long entity", with(func(e *ltm.Entry) { e.Entity = []byte(long(ltm.MaxEntityBytes + 1)) }), ltm.ErrBounds},
		{"empty namespace", with(func(e *ltm.Entry) { e.Namespace = "" }), ltm.ErrInvalid},
		{"long namespace", with(func(e *ltm.Entry) { e.Namespace = long(ltm.MaxNamespaceBytes + 1) }), ltm.ErrBounds},
		{"namespace not UTF-8", with(func(e *ltm.Entry) { e.Namespace = "n\xff" }), ltm.ErrInvalid},
		{"empty key", with(func(e *ltm.Entry) { e.Key = "" }), ltm.ErrInvalid},
		{"long key", with(func(e *ltm.Entry) { e.Key = long(ltm.MaxKeyBytes + 1) }), ltm.ErrBounds},
		{"key not UTF-8", with(func(e *ltm.Entry) { e.Key = "k\xc3" }), ltm.ErrInvalid},
		{"long value", with(func(e *ltm.Entry) { e.Value = make([]byte, ltm.MaxValueBytes+1) }), ltm.ErrBounds},
		{"negative seq", with(func(e *ltm.Entry) { e.Seq = -1 }), ltm.ErrInvalid},
		{"at every bound", with(func(e *ltm.Entry) {
			e.Entity, e.Namespace, e.Key = []byte(long(ltm.MaxEntityBytes)), long(ltm.MaxNamespaceBytes), long(ltm.MaxKeyBytes)
			e.Value = make([]byte, ltm.MaxValueBytes)
		}), nil},
	} {
		x.t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			err := x.s.Put(x.ctx, e)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Put: %v", err)
				}
				if _, found, err := x.s.Get(x.ctx, e.Entity, e.Namespace, e.Key); err != nil || !found {
					t.Fatalf("Get: %v %v", found, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Put: %v, want %v", err, tc.want)
			}
			// The other operations refuse the same entity, namespace, key or seq.
			var others []error
			if e.Seq < 0 {
				others = append(others, x.s.Delete(x.ctx, e.Entity, e.Namespace, e.Key, e.Seq))
			} else if len(e.Value) <= ltm.MaxValueBytes {
				_, _, err := x.s.Get(x.ctx, e.Entity, e.Namespace, e.Key)
				others = append(others, err, x.s.Delete(x.ctx, e.Entity, e.Namespace, e.Key, e.Seq))
			}
			for _, err := range others {
				if !errors.Is(err, tc.want) {
					t.Errorf("Get or Delete: %v, want %v", err, tc.want)
				}
			}
		})
	}
	for _, tc := range []struct {
		prefix string
		limit  int
		want   error
	}{
		{"", 0, ltm.ErrInvalid},
		{"", -1, ltm.ErrInvalid},
		{"", ltm.MaxListLimit + 1, ltm.ErrBounds},
		{long(ltm.MaxKeyBytes + 1), 1, ltm.ErrBounds},
	} {
		_, err := x.s.List(x.ctx, ent, ns, tc.prefix, tc.limit)
		x.wantIs(err, tc.want, fmt.Sprintf("List(prefix of %d bytes, limit %d)", len(tc.prefix), tc.limit))
	}
	if got := x.list(ent, ns, "", ltm.MaxListLimit); !slices.Equal(got, []string{}) {
		x.t.Errorf("refused writes left %q", got)
	}
}

// concurrentWriters races writers of different seqs on the same keys: whatever the order,
// the highest seq's write is what remains, and every other write either landed first or was
// refused as stale.
func concurrentWriters(x *suite) {
	const writers, keys = 12, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*keys)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				key := fmt.Sprintf("k%d", (k+w)%keys)
				seq := int64(w)
				var err error
				// Key k3's highest write is a delete.
				if key == "k3" && w == writers-1 {
					err = x.s.Delete(x.ctx, ent, ns, key, seq)
				} else {
					err = x.s.Put(x.ctx, ltm.Entry{Entity: ent, Namespace: ns, Key: key, Value: fmt.Appendf(nil, "w%d", w), Seq: seq})
				}
				if err != nil && !errors.Is(err, ltm.ErrStale) {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		x.t.Errorf("concurrent write: %v", err)
	}
	for k := range keys - 1 {
		x.want(ent, ns, fmt.Sprintf("k%d", k), fmt.Sprintf("w%d", writers-1), writers-1)
	}
	x.want(ent, ns, "k3", "", -1)
	if got := x.list(ent, ns, "", 10); !slices.Equal(got, []string{"k0", "k1", "k2"}) {
		x.t.Errorf("List = %q", got)
	}
}

// isolation: the same key in other entities and namespaces, including ones that are byte
// prefixes of each other, is another entry.
func isolation(x *suite) {
	scopes := []struct {
		entity    []byte
		namespace string
	}{
		{[]byte("a"), "n"}, {[]byte("ab"), "n"}, {[]byte("a"), "nb"}, {[]byte("a\x00"), "n"},
		{[]byte{0xff, 0x00}, "n"}, {[]byte("a"), "n/x"}, {[]byte("an"), "x"},
	}
	for i, sc := range scopes {
		for _, key := range []string{"k", "k2"} {
			e := ltm.Entry{Entity: sc.entity, Namespace: sc.namespace, Key: key, Value: fmt.Appendf(nil, "%d", i), Seq: int64(10 + i)}
			if err := x.s.Put(x.ctx, e); err != nil {
				x.t.Fatal(err)
			}
		}
	}
	// A low seq in one scope is not stale against a higher one elsewhere.
	if err := x.s.Put(x.ctx, ltm.Entry{Entity: []byte("fresh"), Namespace: "n", Key: "k", Seq: 0}); err != nil {
		x.t.Fatal(err)
	}
	if err := x.s.Delete(x.ctx, scopes[0].entity, scopes[0].namespace, "k", 100); err != nil {
		x.t.Fatal(err)
	}
	for i, sc := range scopes {
		want := []string{"k", "k2"}
		if i == 0 {
			x.want(sc.entity, sc.namespace, "k", "", -1)
			want = []string{"k2"}
		} else {
			x.want(sc.entity, sc.namespace, "k", fmt.Sprint(i), int64(10+i))
		}
		x.want(sc.entity, sc.namespace, "k2", fmt.Sprint(i), int64(10+i))
		if got := x.list(sc.entity, sc.namespace, "", 10); !slices.Equal(got, want) {
			x.t.Errorf("List(%q, %q) = %q, want %q", sc.entity, sc.namespace, got, want)
		}
	}
}

func namespaces(x *suite) {
	names := func(entity []byte, limit int) []string {
		x.t.Helper()
		got, err := x.s.Namespaces(x.ctx, entity, limit)
		if err != nil {
			x.t.Fatalf("Namespaces(%q, %d): %v", entity, limit, err)
		}
		return append([]string{}, got...)
	}
	if got := names(ent, 10); len(got) != 0 {
		x.t.Fatalf("Namespaces of an entity without entries = %q, want none", got)
	}
	write := func(entity []byte, namespace, key string, seq int64) {
		x.t.Helper()
		if err := x.s.Put(x.ctx, ltm.Entry{Entity: entity, Namespace: namespace, Key: key, Value: []byte("v"), Seq: seq}); err != nil {
			x.t.Fatal(err)
		}
	}
	for i, ns := range []string{"b", "a/x", "c", "a", "d", "é"} {
		write(ent, ns, "k1", int64(i))
		write(ent, ns, "k2", int64(i))
	}
	// "c" keeps only tombstones; "d" a tombstone before a live key.
	for _, key := range []string{"k1", "k2"} {
		if err := x.s.Delete(x.ctx, ent, "c", key, 50); err != nil {
			x.t.Fatal(err)
		}
	}
	if err := x.s.Delete(x.ctx, ent, "d", "k1", 50); err != nil {
		x.t.Fatal(err)
	}
	// Entities that share a prefix with ent, or that ent is a prefix of, are apart.
	write([]byte("entity-10"), "q", "k", 1)
	write([]byte("entity-"), "r", "k", 1)
	for _, tc := range []struct {
		entity []byte
		limit  int
		want   []string
	}{
		{ent, 10, []string{"a", "a/x", "b", "d", "é"}},
		{ent, 2, []string{"a", "a/x"}},
		{ent, 1, []string{"a"}},
		{[]byte("entity-10"), 10, []string{"q"}},
		{[]byte("entity-"), ltm.MaxListLimit, []string{"r"}},
		{[]byte("entity-2"), 10, []string{}},
	} {
		if got := names(tc.entity, tc.limit); !slices.Equal(got, tc.want) {
			x.t.Errorf("Namespaces(%q, %d) = %q, want %q", tc.entity, tc.limit, got, tc.want)
		}
	}
	_, err := x.s.Namespaces(x.ctx, nil, 10)
	x.wantIs(err, ltm.ErrInvalid, "Namespaces of no entity")
	_, err = x.s.Namespaces(x.ctx, ent, 0)
	x.wantIs(err, ltm.ErrInvalid, "Namespaces with limit 0")
	_, err = x.s.Namespaces(x.ctx, ent, ltm.MaxListLimit+1)
	x.wantIs(err, ltm.ErrBounds, "Namespaces over MaxListLimit")
	_, err = x.s.Namespaces(x.ctx, bytes.Repeat([]byte("e"), ltm.MaxEntityBytes+1), 10)
	x.wantIs(err, ltm.ErrBounds, "Namespaces of an entity over MaxEntityBytes")
}
