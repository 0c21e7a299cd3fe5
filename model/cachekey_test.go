package model

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"
)

func f64(f float64) *float64 { return &f }
func i64(i int64) *int64     { return &i }

func baseRequest() *Request {
	return &Request{
		Model:        "scripted",
		Messages:     []Message{{Role: RoleSystem, Content: "be brief"}, {Role: RoleUser, Content: "where is my refund?"}},
		SchemaDigest: "sha256:00",
		Sampling:     Sampling{Temperature: f64(0.2), MaxOutputTokens: 512},
		EntityKey:    []byte("customer-0042"),
		Seq:          7,
		Step:         1,
	}
}

func TestCacheKeyKnownAnswer(t *testing.T) {
	const want = `{"domain":"beamagents.model.cache-key.v1","model":"scripted","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"where is my refund?"}],"schema_digest":"sha256:00","sampling":{"temperature":"0.2","top_p":null,"max_output_tokens":"512","seed":null},"entity_key":"Y3VzdG9tZXItMDA0Mg==","seq":"7","step":"1"}`
	if got := string(cacheMaterial(baseRequest())); got != want {
		t.Fatalf("material\n got %s\nwant %s", got, want)
	}
	if k := CacheKey(baseRequest()); !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(k) {
		t.Fatalf("key %q is not 64 hex digits", k)
	}
}

func TestCacheKeyCoversEveryInput(t *testing.T) {
	base := CacheKey(baseRequest())
	for _, tc := range []struct {
		name   string
		mutate func(*Request)
	}{
		{"model", func(r *Request) { r.Model = "other" }},
		{"message content", func(r *Request) { r.Messages[1].Content += "!" }},
		{"message role", func(r *Request) { r.Messages[0].Role = RoleUser }},
		{"message split", func(r *Request) {
			r.Messages = []Message{{Role: RoleSystem, Content: "be brief"}, {Role: RoleUser, Content: "where is my "}, {Role: RoleUser, Content: "refund?"}}
		}},
		{"schema digest", func(r *Request) { r.SchemaDigest = "sha256:01" }},
		{"temperature", func(r *Request) { r.Sampling.Temperature = f64(0.3) }},
		{"temperature unset", func(r *Request) { r.Sampling.Temperature = nil }},
		{"top_p", func(r *Request) { r.Sampling.TopP = f64(1) }},
		{"max tokens", func(r *Request) { r.Sampling.MaxOutputTokens = 0 }},
		{"seed", func(r *Request) { r.Sampling.Seed = i64(0) }},
		{"entity", func(r *Request) { r.EntityKey = []byte("customer-0043") }},
		{"seq", func(r *Request) { r.Seq = 8 }},
		{"step", func(r *Request) { r.Step = 2 }},
		{"invalid utf8 vs replacement", func(r *Request) { r.Messages[1].Content = "\ufffd" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := baseRequest()
			tc.mutate(r)
			if CacheKey(r) == base {
				t.Fatalf("changing %s does not change the key", tc.name)
			}
		})
	}
	a, b := baseRequest(), baseRequest()
	a.Messages[1].Content = "\xff"
	b.Messages[1].Content = "\ufffd"
	if CacheKey(a) == CacheKey(b) {
		t.Fatal("invalid UTF-8 collides with U+FFFD")
	}
	if CacheKey(baseRequest()) != base {
		t.Fatal("CacheKey is not deterministic")
	}
	r := baseRequest()
	r.ResponseSchema = []byte(`{"type":"object"}`)
	if CacheKey(r) != base {
		t.Fatal("the schema text must not matter beyond its digest")
	}
}

// The hand-written escaper writes exactly what encoding/json writes, so cache keys stay as
// they are defined.
func FuzzAppendJSONStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s", "<a href='x'>&</a>", "\b\f\n\r\t\x00\x1f\x7f", "é\u2028\u2029😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}
