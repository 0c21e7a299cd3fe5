package tool_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/interaction"
)

func schemaOf(t testing.TB, js string) *interaction.Schema {
	t.Helper()
	s, err := tool.FromJSONSchema("t.args", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func valueOf(t testing.TB, s *interaction.Schema, fields string) *interaction.Value {
	t.Helper()
	doc := `{"schema":"` + interaction.ValueFormat + `","root_type_id":"` + s.RootTypeID() + `","schema_digest":"` + s.Digest() + `","value":{"fields":` + fields + "}}\n"
	v, err := s.Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const wide = `{"type":"object","properties":{
  "small":{"type":"integer","minimum":-5,"maximum":5},
  "exact":{"type":"integer"},
  "big":{"type":"string","format":"int64"},
  "flag":{"type":"boolean"},
  "name":{"type":"string","maxLength":8},
  "inner":{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":9}}}}}`

// Arguments are presented with property names; integers are JSON numbers only when the
// field's whole range is exactly representable, else decimal strings.
func TestPresent(t *testing.T) {
	s := schemaOf(t, wide)
	v := valueOf(t, s, `{"t.args.big":"9223372036854775807","t.args.exact":"9007199254740991","t.args.flag":true,"t.args.inner":{"fields":{"t.args.inner.n":"3"}},"t.args.name":"ab\"c","t.args.small":"-5"}`)
	got := string(tool.Present(v))
	want := `{"big":"9223372036854775807","exact":9007199254740991,"flag":true,"inner":{"n":3},"name":"ab\"c","small":-5}`
	if got != want {
		t.Fatalf("Present:\n got %s\nwant %s", got, want)
	}
	// An integer beyond 2^53−1 cannot enter an "integer" property: refused, never rounded.
	doc := `{"schema":"` + interaction.ValueFormat + `","root_type_id":"t.args","schema_digest":"` + s.Digest() + `","value":{"fields":{"t.args.big":"1","t.args.exact":"9007199254740992","t.args.flag":true,"t.args.inner":{"fields":{"t.args.inner.n":"3"}},"t.args.name":"","t.args.small":"0"}}}` + "\n"
	if _, err := s.Decode([]byte(doc)); err == nil {
		t.Fatal("2^53 admitted into a JSON-number property")
	}
}

func TestFromJSONSchemaRefusals(t *testing.T) {
	for name, js := range map[string]string{
		"not json":       `{`,
		"not an object":  `{"type":"string"}`,
		"no properties":  `{"type":"object"}`,
		"float":          `{"type":"object","properties":{"x":{"type":"number"}}}`,
		"array":          `{"type":"object","properties":{"x":{"type":"array"}}}`,
		"enum":           `{"type":"object","properties":{"x":{"type":"string","enum":["a"]}}}`,
		"bad property":   `{"type":"object","properties":{"x-y":{"type":"string"}}}`,
		"empty range":    `{"type":"object","properties":{"x":{"type":"integer","minimum":5,"maximum":4}}}`,
		"union":          `{"type":"object","properties":{"x":{"type":["string","null"]}}}`,
		"bad max length": `{"type":"object","properties":{"x":{"type":"string","maxLength":0}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := tool.FromJSONSchema("t.args", []byte(js)); !errors.Is(err, tool.ErrDeclaration) {
				t.Fatalf("%v", err)
			}
		})
	}
}

type wideArgs struct {
	Small int64  `json:"small"`
	Exact int64  `json:"exact"`
	Big   int64  `json:"big,string"`
	Flag  bool   `json:"flag"`
	Name  string `json:"name"`
	Inner struct {
		N int `json:"n"`
	} `json:"inner"`
}

// A typed Go tool decodes its presented arguments; a type that would read a string-presented
// integer as a number (or misses a property) is refused when the tool is built.
func TestFunc(t *testing.T) {
	s := schemaOf(t, wide)
	tl, err := tool.Func("t", s, func(_ context.Context, c tool.Call, a wideArgs) (wideArgs, error) { return a, nil })
	if err != nil {
		t.Fatal(err)
	}
	v := valueOf(t, s, `{"t.args.big":"-9223372036854775808","t.args.exact":"1","t.args.flag":false,"t.args.inner":{"fields":{"t.args.inner.n":"9"}},"t.args.name":"x","t.args.small":"5"}`)
	out, err := tl.Invoke(context.Background(), tool.Call{IntentID: "i", Args: tool.Present(v)})
	if err != nil || string(out) != `{"small":5,"exact":1,"big":"-9223372036854775808","flag":false,"name":"x","inner":{"n":9}}` {
		t.Fatalf("%s %v", out, err)
	}
	type noString struct {
		wideArgs
		Big int64 `json:"big"`
	}
	if _, err := tool.Func("t", s, func(context.Context, tool.Call, noString) (int, error) { return 0, nil }); !errors.Is(err, tool.ErrDeclaration) || !strings.Contains(err.Error(), "declare a string") {
		t.Fatalf("int64 without ,string: %v", err)
	}
	type missing struct {
		Small int64 `json:"small"`
	}
	if _, err := tool.Func("t", s, func(context.Context, tool.Call, missing) (int, error) { return 0, nil }); !errors.Is(err, tool.ErrDeclaration) {
		t.Fatalf("missing fields: %v", err)
	}
}

// HTTP tools POST the presented arguments with the intent id as Idempotency-Key, retry 5xx
// (and only 5xx) and time out each attempt.
func TestHTTP(t *testing.T) {
	s := schemaOf(t, `{"type":"object","properties":{"order_id":{"type":"string"}}}`)
	args := tool.Present(valueOf(t, s, `{"t.args.order_id":"A-1"}`))
	var calls atomic.Int64
	var failFirst atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Idempotency-Key") != "intent-1" || r.Header.Get("Content-Type") != "application/json" || string(body) != `{"order_id":"A-1"}` {
			http.Error(w, "bad request shape", 400)
			return
		}
		if failFirst.Add(-1) >= 0 {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"status":"shipped"}`)
	})
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "no such order", 404)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	mk := func(path string, retries int) tool.Tool {
		tl, err := tool.NewHTTP(tool.HTTP{ToolName: "t", URL: srv.URL + path, Schema: s, Retries: retries, Backoff: time.Millisecond, Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	call := tool.Call{IntentID: "intent-1", Tool: "t", Args: args}
	for _, tc := range []struct {
		name      string
		path      string
		retries   int
		fails     int64
		wantCalls int64
		wantErr   bool
	}{
		{"ok", "/ok", 2, 0, 1, false},
		{"5xx retried", "/ok", 2, 2, 3, false},
		{"5xx exhausted", "/ok", 2, 3, 3, true},
		{"4xx not retried", "/bad", 2, 0, 1, true},
		{"timeout retried", "/slow", 1, 0, 2, true},
		{"no retries", "/ok", -1, 1, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			failFirst.Store(tc.fails)
			out, err := mk(tc.path, tc.retries).Invoke(context.Background(), call)
			if (err != nil) != tc.wantErr || calls.Load() != tc.wantCalls {
				t.Fatalf("out %s err %v calls %d", out, err, calls.Load())
			}
			if err != nil && !errors.Is(err, tool.ErrFailed) {
				t.Fatalf("error %v is not ErrFailed", err)
			}
			if err == nil && string(out) != `{"status":"shipped"}` {
				t.Fatalf("payload %s", out)
			}
		})
	}
}

func FuzzFromJSONSchema(f *testing.F) {
	for _, s := range []string{wide, `{"type":"object","properties":{"a":{"type":"integer","minimum":1e300}}}`, `{}`, `[]`, `{"type":"object","properties":{"o":{"type":"object","properties":{"o":{"type":"object"}}}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		s, err := tool.FromJSONSchema("f.args", []byte(js))
		if err != nil {
			if !errors.Is(err, tool.ErrDeclaration) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if s.Root().Kind() != interaction.Record {
			t.Fatal("a derived schema is not a record")
		}
	})
}
