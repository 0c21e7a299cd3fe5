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
