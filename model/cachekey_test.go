package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
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
	for name, material := range map[string]func(*Request) []byte{"reference": refCacheMaterial, "streamed": material} {
		if got := string(material(baseRequest())); got != want {
			t.Fatalf("%s material\n got %s\nwant %s", name, got, want)
		}
	}
	k := CacheKey(baseRequest())
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(k) {
		t.Fatalf("key %q is not 64 hex digits", k)
	}
	if sum := sha256.Sum256([]byte(want)); k != hex.EncodeToString(sum[:]) {
		t.Fatalf("key %s is not the SHA-256 of the material", k)
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
	for _, s := range []string{"", "plain", "q\"b\\s", "<a href='x'>&</a>", "\b\f\n\r\t\x00\x1f\x7f", "é\u2028\u2029😀", "a\xffb", "\xe2\x80", "\xed\xa0\x80", "\xc0\xaf", "\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := appendJSONString([]byte("prefix"), s)
		if ok != utf8.ValidString(s) {
			t.Fatalf("appendJSONString(%q) reports valid UTF-8 %v", s, ok)
		}
		if !ok {
			return
		}
		want, _ := json.Marshal(s)
		if string(got) != "prefix"+string(want) {
			t.Fatalf("appendJSONString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

// material is the streamed CacheKey's material in one slice, for the known-answer test.
func material(req *Request) []byte {
	b := appendMaterialHead(nil, req)
	for i := range req.Messages {
		b = appendMessage(b, i, &req.Messages[i])
	}
	return appendMaterialTail(b, req)
}

// mustMatchReference fails unless CacheKey gives req the key of the reference implementation.
func mustMatchReference(t *testing.T, req *Request) {
	t.Helper()
	if got, want := CacheKey(req), refCacheKey(req); got != want {
		t.Fatalf("CacheKey = %s, reference %s\nmaterial %q\nreference %q", got, want, material(req), refCacheMaterial(req))
	}
}

// The streamed CacheKey keys every request as the reference implementation does: escapes,
// invalid UTF-8, every sampling form, extreme numbers, and conversations long enough to be
// flushed into the digest in several pieces.
func TestCacheKeyMatchesReference(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, tc := range []struct {
		name   string
		mutate func(*Request)
	}{
		{"base", func(*Request) {}},
		{"zero request", func(r *Request) { *r = Request{} }},
		{"no messages", func(r *Request) { r.Messages = nil }},
		{"escapes", func(r *Request) {
			r.Messages[1].Content = "q\"b\\s <a>&</a> \b\f\n\r\t\x00\x1f\x7f é\u2028\u2029😀"
		}},
		{"invalid utf8 content", func(r *Request) { r.Messages[1].Content = "ok \xff then \"quoted\"" }},
		{"invalid utf8 after escapes", func(r *Request) { r.Messages[1].Content = "<\n\u2028\xed\xa0\x80" }},
		{"invalid utf8 everywhere", func(r *Request) {
			r.Model, r.SchemaDigest, r.Messages[0].Role = "m\xc0", "d\xe2\x80", "\xff"
		}},
		{"replacement char", func(r *Request) { r.Messages[1].Content = "\ufffd" }},
		{"truncated rune at end", func(r *Request) { r.Messages[1].Content = "abc\xe2\x82" }},
		{"every sampling field", func(r *Request) {
			r.Sampling = Sampling{Temperature: f64(1e-300), TopP: f64(0.95), MaxOutputTokens: -1, Seed: i64(-9223372036854775808)}
		}},
		{"special floats", func(r *Request) {
			r.Sampling.Temperature, r.Sampling.TopP = f64(math.Inf(-1)), f64(math.NaN())
		}},
		{"big floats", func(r *Request) { r.Sampling.Temperature, r.Sampling.TopP = f64(math.MaxFloat64), f64(1e21) }},
		{"negative zero", func(r *Request) { r.Sampling.Temperature = f64(math.Copysign(0, -1)) }},
		{"extreme ints", func(r *Request) {
			r.Seq, r.Step, r.Sampling.MaxOutputTokens, r.Sampling.Seed = math.MinInt64, math.MaxUint32, math.MaxInt64, i64(0)
		}},
		{"binary entity key", func(r *Request) { r.EntityKey = []byte{0, 0xff, 0xfe, '"', '<'} }},
		{"empty entity key", func(r *Request) { r.EntityKey = nil }},
		{"long message", func(r *Request) { r.Messages[1].Content = long }},
		{"long escaped message", func(r *Request) { r.Messages[1].Content = strings.Repeat("\"<\x01é", 800) }},
		{"long invalid message", func(r *Request) { r.Messages[1].Content = long + "\xff" }},
		{"many messages", func(r *Request) {
			for i := range 200 {
				r.Messages = append(r.Messages, Message{Role: RoleTool, Content: fmt.Sprintf("result %d: \"ok\"", i)})
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := baseRequest()
			tc.mutate(r)
			mustMatchReference(t, r)
		})
	}
	for name, r := range benchRequests() {
		t.Run(name, func(t *testing.T) { mustMatchReference(t, r) })
	}
}

// FuzzCacheKeyMatchesReference compares CacheKey with the reference implementation over
// arbitrary text (invalid UTF-8, controls, quotes, U+2028 …), split into messages of every
// role and placed in every string field.
func FuzzCacheKeyMatchesReference(f *testing.F) {
	f.Add("where is my refund?", []byte("customer-0042"), int64(7), uint32(1), 0.2, uint8(2))
	f.Add("q\"b\\s<>&\x00\x1f\x7f\u2028\u2029😀", []byte{}, int64(-1), uint32(0), math.Inf(1), uint8(5))
	f.Add("\xff\xfe\xed\xa0\x80 \xc0\xaf \ufffd", []byte{0xff}, int64(math.MaxInt64), uint32(math.MaxUint32), math.NaN(), uint8(17))
	f.Fuzz(func(t *testing.T, text string, entity []byte, seq int64, step uint32, temp float64, parts uint8) {
		r := baseRequest()
		r.Model, r.SchemaDigest, r.EntityKey, r.Seq, r.Step = text, text, entity, seq, step
		r.Sampling.Temperature, r.Sampling.Seed = f64(temp), i64(seq)
		if parts%2 == 1 {
			r.Sampling.Temperature, r.Sampling.TopP, r.Sampling.Seed = nil, f64(temp), nil
		}
		// Split text into up to parts messages, repeated so a piece may exceed the buffer.
		n := int(parts%16) + 1
		for i := range n {
			lo, hi := i*len(text)/n, (i+1)*len(text)/n
			r.Messages = append(r.Messages, Message{Role: text[:lo], Content: strings.Repeat(text[lo:hi], int(parts)%5+1)})
		}
		mustMatchReference(t, r)
	})
}

// The material of a usual request stays on the stack: a key allocates only its string.
func TestCacheKeyAllocatesOnlyItsString(t *testing.T) {
	req := benchRequests()["first_step"]
	if n := testing.AllocsPerRun(100, func() { CacheKey(req) }); n != 1 {
		t.Fatalf("CacheKey makes %v allocations, want 1", n)
	}
}
