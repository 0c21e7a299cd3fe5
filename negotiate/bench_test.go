package negotiate_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/beamagents/beamagents/negotiate"
)

// modelResponse is a ~2 KiB refund proposal as a provider writes it: indented, no envelope,
// integers as JSON numbers, members in the order encoding/json sorts them.
func modelResponse(tb testing.TB) []byte {
	tb.Helper()
	note := strings.Repeat("The customer reports the parcel arrived damaged; photos attached. ", 20)[:1200]
	v := map[string]any{
		"case": "assist.refund",
		"fields": map[string]any{
			"assist.refund.order_id":     "ORD-2026-000417",
			"assist.refund.amount_minor": json.Number("125000"),
			"assist.refund.ledger_delta": json.Number("-125000"),
			"assist.refund.priority":     json.Number("3"),
			"assist.refund.receipt":      []any{json.Number("222"), json.Number("173"), json.Number("190"), json.Number("239"), json.Number("0"), json.Number("17")},
			"assist.refund.total": map[string]any{"fields": map[string]any{
				"assist.money.currency": "EUR", "assist.money.minor_units": json.Number("125000"),
			}},
			"assist.refund.notify": map[string]any{"case": "assist.channel.email", "fields": map[string]any{
				"assist.email.address": "customer.service+refunds@example.com",
			}},
			"assist.refund.note":   note,
			"assist.refund.reason": json.Number("17"),
			"assist.refund.big":    json.Number("18446744073709551615"),
		},
	}
	text, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return text
}

func TestModelResponseFixture(t *testing.T) {
	text := modelResponse(t)
	if n := len(text); n < 1900 || n > 2300 {
		t.Fatalf("the benchmark's response is %d bytes, not about 2 KiB", n)
	}
	c, err := negotiate.Canonicalize(proposalSchema(t), text)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(c.Document, text) || len(c.Applied) == 0 {
		t.Fatal("the fixture should need canonicalization")
	}
}

// BenchmarkCanonicalize compares canonicalizing a ~2 KiB model response (parse, check every
// bound, render, and the strict decoder on the result) with encoding/json reading the same
// bytes into an untyped value, which checks nothing.
func BenchmarkCanonicalize(b *testing.B) {
	s := proposalSchema(b)
	text := modelResponse(b)
	b.Run("negotiate.Canonicalize", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := negotiate.Canonicalize(s, text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(text, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json.UseNumber", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			dec := json.NewDecoder(bytes.NewReader(text))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
	m, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Admitter.Admit", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			out, err := m.Admit(text)
			if err != nil {
				b.Fatal(err)
			}
			_ = out.Receipt.Attributes()
		}
	})
}

// BenchmarkCanonicalizeRatio times both interleaved in one loop, so both see the same machine
// load (two shared cores are noisy), and reports Canonicalize's time over encoding/json's.
func BenchmarkCanonicalizeRatio(b *testing.B) {
	s := proposalSchema(b)
	text := modelResponse(b)
	var canon, generic time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := negotiate.Canonicalize(s, text); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		var v any
		if err := json.Unmarshal(text, &v); err != nil {
			b.Fatal(err)
		}
		generic += time.Since(t1)
		canon += t1.Sub(t0)
	}
	b.ReportMetric(float64(len(text)), "text-bytes")
	b.ReportMetric(float64(canon.Nanoseconds())/float64(b.N), "canonicalize-ns/op")
	b.ReportMetric(float64(generic.Nanoseconds())/float64(b.N), "json-ns/op")
	b.ReportMetric(float64(canon)/float64(generic), "ratio")
}

// admitCanonical returns the admitter the driver uses (TRANSFORM_ALL) and a text that already
// is its canonical document, as a scripted or replayed model answers.
func admitCanonical(b *testing.B) (*negotiate.Admitter, []byte) {
	s := proposalSchema(b)
	m, err := negotiate.NewAdmitter(s, negotiate.Agreement{Protocol: negotiate.TransformAll})
	if err != nil {
		b.Fatal(err)
	}
	return m, []byte(canonicalDoc(s, canonicalRefund))
}

// BenchmarkAdmitCanonical is the model boundary as the driver crosses it: a canonical text
// admitted, then its receipt written into the LLM_CALL event's attributes.
func BenchmarkAdmitCanonical(b *testing.B) {
	m, text := admitCanonical(b)
	b.Run("Admit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := m.Admit(text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Admit+PutAttributes", func(b *testing.B) {
		b.ReportAllocs()
		attrs := make(map[string]string, 32)
		for b.Loop() {
			out, err := m.Admit(text)
			if err != nil {
				b.Fatal(err)
			}
			out.Receipt.PutAttributes(attrs)
		}
	})
}

// BenchmarkReceiptDigest digests a receipt of an admitted model output and one of a
// conveyed output with transformations and warnings.
func BenchmarkReceiptDigest(b *testing.B) {
	m, text := admitCanonical(b)
	out, err := m.Admit(text)
	if err != nil {
		b.Fatal(err)
	}
	lists := *out.Receipt
	lists.Transformations = []string{"envelope", "final_lf", "integer_number", "key_order", "whitespace"}
	lists.Warnings = []string{"nullability:prio.priority"}
	for name, rc := range map[string]*negotiate.Receipt{"admitted": out.Receipt, "lists": &lists} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = rc.Digest()
			}
		})
	}
	b.Run("Document", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			documentSink = lists.Document()
		}
	})
}

// documentSink keeps a benchmarked document on the heap, as a caller holding it would.
var documentSink []byte
