package console_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/records"
)

var detailOfKey = regexp.MustCompile(`key [0-9a-f]{64}`)

// Any entity key, of any length and bytes, is stored and found again through the path of
// its page, which stays short; its page lists its dead letters and no other key's.
func FuzzEntityKeyPath(f *testing.F) {
	f.Add([]byte("customer-1"), uint16(0))
	f.Add([]byte("\xff\x00<"), uint16(console.MaxKeyBytes-3))
	f.Add([]byte("k"), uint16(console.MaxKeyBytes))
	f.Add([]byte("k"), uint16(40_000))
	f.Add([]byte("ab"), uint16(65_535))
	st, err := console.Open(filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	h, err := console.New(console.Options{Store: st})
	if err != nil {
		f.Fatal(err)
	}
	srv := httptest.NewServer(h)
	f.Cleanup(srv.Close)
	dead, _ := records.KindOf(records.OutDeadLetter)
	f.Fuzz(func(t *testing.T, unit []byte, n uint16) {
		if len(unit) == 0 {
			return
		}
		key := bytes.Repeat(unit, 1+int(n)/len(unit))
		detail := fmt.Sprintf("key %x", sha256.Sum256(key))
		d := records.DeadLetter(key, T0, "model_error", detail)
		if _, _, err := st.Ingest("", console.Offset{}, []console.Record{{Kind: dead, Data: marshal(t, d)}}); err != nil {
			t.Fatal(err)
		}
		path := console.KeyPath(key)
		if len(path) > longestPath {
			t.Fatalf("a path of %d bytes", len(path))
		}
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the page of a key of %d bytes answers %d", len(key), resp.StatusCode)
		}
		_, listed, _ := bytes.Cut(page, []byte(`id="entity-dead"`)) // the key itself is shown above
		for _, m := range detailOfKey.FindAll(listed, -1) {
			if string(m) != detail {
				t.Fatalf("the page of a key of %d bytes lists another key's dead letter", len(key))
			}
		}
		if e, err := st.Entity(key); err != nil || !e.Known || !bytes.Equal(e.Key, key) || len(e.DeadLetters) == 0 {
			t.Fatalf("entity of a key of %d bytes: %v", len(key), err)
		}
	})
}
