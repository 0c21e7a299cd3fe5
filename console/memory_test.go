package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
)

// An entity page lists the key's long-term memory from the store the console is given: its
// namespaces in byte order with their entries in key order, escaped; a key known only to the
// store has a page; a store that fails is named on the page, which still answers.
func TestEntityPageListsLongTermMemory(t *testing.T) {
	ctx := context.Background()
	mem, err := backend.OpenSQLite(ctx, filepath.Join(t.TempDir(), "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := console.Open(filepath.Join(t.TempDir(), "console.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	put := func(entity, ns, key, value string, seq int64) {
		t.Helper()
		if err := mem.Put(ctx, ltm.Entry{Entity: []byte(entity), Namespace: ns, Key: key, Value: []byte(value), Seq: seq}); err != nil {
			t.Fatal(err)
		}
	}
	put("cust-1", "profile", "tier", "gold", 3)
	put("cust-1", "orders", "o-2", "<b>refunded</b>", 7)
	put("cust-1", "orders", "o-1", "shipped", 5)
	put("cust-1", "gone", "x", "y", 1)
	if err := mem.Delete(ctx, []byte("cust-1"), "gone", "x", 2); err != nil {
		t.Fatal(err)
	}
	for i := range 55 {
		put("cust-2", "log", fmt.Sprintf("e%02d", i), "v", int64(i))
	}
	h, err := console.New(console.Options{Store: st, Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	page := get(t, srv.URL+console.KeyPath([]byte("cust-1")))
	for _, want := range []string{
		"<h2>Long-term memory</h2>",
		`data-namespace="orders"`, `data-namespace="profile"`,
		"&lt;b&gt;refunded&lt;/b&gt;", "gold",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("cust-1's page lacks %q", want)
		}
	}
	if strings.Contains(page, `data-namespace="gone"`) || strings.Contains(page, "<b>refunded") {
		t.Error("cust-1's page lists a namespace of tombstones only, or an unescaped value")
	}
	if i, j, k := strings.Index(page, `data-namespace="orders"`), strings.Index(page, `data-namespace="profile"`), strings.Index(page, "o-1"); i > j || k < i || k > strings.Index(page, "o-2") {
		t.Error("namespaces or entries are not in byte order")
	}
	if page := get(t, srv.URL+console.KeyPath([]byte("cust-2"))); strings.Count(page, `<td class="mono">e`) != 50 || !strings.Contains(page, "The first 50 entries are listed.") {
		t.Error("cust-2's page does not list its first 50 entries of 55 and say so")
	}

	mem.Close()
	resp, err := http.Get(srv.URL + console.KeyPath([]byte("cust-1")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `id="long-term-error"`) {
		t.Errorf("with the store closed: %d, want 404 (no output ingested) naming the store's failure", resp.StatusCode)
	}
}
