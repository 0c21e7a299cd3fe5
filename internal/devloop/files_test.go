package devloop

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The keyring dev makes at its first start is kept: a restart signs with the same secret.
func TestKeyringRefKept(t *testing.T) {
	dir := t.TempDir()
	ref, err := KeyringRef(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(strings.TrimPrefix(ref, "file:"))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(strings.TrimPrefix(ref, "file:")); st.Mode().Perm() != 0o600 {
		t.Errorf("keyring mode %v, want 0600", st.Mode().Perm())
	}
	again, err := KeyringRef(dir)
	if err != nil || again != ref {
		t.Fatalf("second start: %q, %v; want %q", again, err, ref)
	}
	if second, _ := os.ReadFile(strings.TrimPrefix(ref, "file:")); string(second) != string(first) {
		t.Fatal("the keyring changed across starts")
	}
	if got, want := MemoryStoreRef(dir), "sqlite:"+filepath.Join(dir, "memory.db"); got != want {
		t.Errorf("MemoryStoreRef = %q, want %q", got, want)
	}
}

func TestReadServer(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadServer(dir); err == nil || !strings.Contains(err.Error(), "start `beamagents dev` first") {
		t.Fatalf("no server.json: %v", err)
	}
	if err := writeServer(dir, Server{URL: "http://127.0.0.1:1/", Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadServer(dir); err != nil || s.URL != "http://127.0.0.1:1/" || s.Token != "tok" {
		t.Fatalf("ReadServer = %+v, %v", s, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ServerFile), []byte(`{"url":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadServer(dir); err == nil || !strings.Contains(err.Error(), "does not name a dev server") {
		t.Fatalf("no token: %v", err)
	}
}

// Call sends the bearer token and JSON, decodes an answer, and returns a refusal as its
// stable code and detail.
func TestCall(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]string
		json.NewDecoder(r.Body).Decode(&in)
		switch {
		case r.Header.Get("Authorization") != "Bearer tok":
			w.WriteHeader(http.StatusUnauthorized)
		case in["key"] == "":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"code":"bad_event","detail":"no key"}}`))
		default:
			w.Write([]byte(`{"event_time_ms":42}`))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, token, key, err string
	}{
		{"accepted", "tok", "k", ""},
		{"refused", "tok", "", "bad_event (HTTP 400): no key"},
		{"no code", "other", "k", "HTTP 401 from the dev server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out struct {
				EventTimeMs int64 `json:"event_time_ms"`
			}
			err := Call(srv.URL+"/", tc.token, "/api/events", map[string]string{"key": tc.key}, &out)
			if tc.err == "" {
				if err != nil || out.EventTimeMs != 42 {
					t.Fatalf("got %+v, %v", out, err)
				}
				return
			}
			if err == nil || err.Error() != tc.err {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// ReadServer never panics on server.json's bytes and accepts only a URL with a token.
func FuzzReadServer(f *testing.F) {
	f.Add([]byte(`{"url":"http://127.0.0.1:1/","token":"t"}`))
	f.Add([]byte(`{"url":"x"}`))
	f.Add([]byte(`[`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, ServerFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := ReadServer(dir); err == nil && (s.URL == "" || s.Token == "") {
			t.Fatalf("accepted %q as %+v", data, s)
		}
	})
}
