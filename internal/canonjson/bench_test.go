package canonjson

import (
	"strings"
	"testing"
)

// BenchmarkDigest digests a receipt-sized document under a domain and a value document
// without one (an output's digest).
func BenchmarkDigest(b *testing.B) {
	body := []byte(strings.Repeat("0123456789abcdef", 40))
	for name, domain := range map[string]string{"domain": "beam_agents.negotiate receipt.v1\x00", "plain": ""} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Digest(domain, body)
			}
		})
	}
}

// BenchmarkAppendString writes a digest and a long note (nothing to escape) and a reply with
// a few escapes.
func BenchmarkAppendString(b *testing.B) {
	for name, s := range map[string]string{
		"digest": "sha256:" + strings.Repeat("0123456789abcdef", 4),
		"note":   strings.Repeat("The customer reports the parcel arrived damaged; photos attached. ", 20),
		"reply":  strings.Repeat("Your refund of 12.50 EUR is on its way.\nOrder \"A1\": é€ ", 4),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			buf := make([]byte, 0, 2*len(s)+2)
			for b.Loop() {
				buf = AppendString(buf[:0], s)
			}
		})
	}
}
