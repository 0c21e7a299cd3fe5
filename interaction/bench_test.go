package interaction_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/interaction"
)

// proposal2K is a representative proposal of about 2 KiB: a refund with nested records, a
// nested variant, bytes, every integer representation and a prose note with escapes and
// non-ASCII text.
func proposal2K(tb testing.TB) (*interaction.Schema, []byte) {
	tb.Helper()
	s := mustSchema(tb, "shop.proposal")
	note := strings.Repeat("The courier confirmed the parcel was lost in transit; refund the full amount incl. shipping (€4.99). "+
		"Customer asked: \"Can you also send a new one?\"\n", 9)
	m := message(tb, "shop.v1.Proposal", map[string]any{
		"refund.order_id": "ORD-2024-000117-B", "refund.amount_minor": uint64(25990), "refund.reason": uint32(17),
		"refund.priority": int32(2), "refund.ledger_delta": int64(-25990), "refund.receipt": []byte("receipt:7f3a9c"),
		"refund.total.currency": "EUR", "refund.total.minor_units": int64(25990),
		"refund.fee.currency": "EUR", "refund.fee.minor_units": int64(499),
		"refund.notify.email.address": "customer.name@example.com", "refund.note": note,
	})
	v, err := s.ValueOf(m)
	if err != nil {
		tb.Fatal(err)
	}
	return s, v.Canonical()
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
