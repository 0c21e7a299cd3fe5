package interaction_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/corpus"
)

func proposal2K(tb testing.TB) (*interaction.Schema, []byte) {
	s := mustSchema(tb, "shop.proposal")
	return s, corpus.Proposal2K(tb, s, testFiles(tb))
}

func BenchmarkDecode2K(b *testing.B) {
	s, doc := proposal2K(b)
	b.Run("interaction.Decode", func(b *testing.B) { benchDecode(b, s, doc) })
	b.Run("encoding-json-map", func(b *testing.B) { benchJSON(b, doc) })
}

func benchDecode(b *testing.B, s *interaction.Schema, doc []byte) {
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Decode(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func benchJSON(b *testing.B, doc []byte) {
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeRatio2K times both decoders interleaved in one loop, so both see the same
// machine load, and reports Decode's time over encoding/json's ("ratio" below 1 means the
// strict decoder is faster than the lenient generic parse).
func BenchmarkDecodeRatio2K(b *testing.B) {
	s, doc := proposal2K(b)
	var strict, generic time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.Decode(doc); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			b.Fatal(err)
		}
		generic += time.Since(t1)
		strict += t1.Sub(t0)
	}
	b.ReportMetric(float64(len(doc)), "doc-bytes")
	b.ReportMetric(float64(strict.Nanoseconds())/float64(b.N), "decode-ns/op")
	b.ReportMetric(float64(generic.Nanoseconds())/float64(b.N), "json-ns/op")
	b.ReportMetric(float64(strict)/float64(generic), "ratio")
}
