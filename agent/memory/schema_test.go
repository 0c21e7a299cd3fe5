package memory_test

import (
	"testing"

	"github.com/beamagents/beamagents/agent/memory"
)

// The summary schema's digest is part of every summary's replay-cache key: a change would
// make recorded caches miss. These digests change only with the schema itself.
func TestSummarySchemaIsStable(t *testing.T) {
	for _, tc := range []struct {
		bound  int
		digest string
	}{
		{memory.DefaultSummaryBytes, "sha256:bd36b0a7e4af3c224df484540e409c053313651c9dbd6f454aaf0d7da58c86bc"},
		{memory.MaxSummaryBytes, "sha256:d0b6de797f5b5461bf6b8c8cae76799933d1615b40d0e55d776c041bb8a3726a"},
	} {
		s, err := memory.SummarySchema(tc.bound)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := memory.SummarySchema(tc.bound)
		if s.Digest() != tc.digest || again != s {
			t.Errorf("bound %d: digest %s (built once: %v), want %s", tc.bound, s.Digest(), again == s, tc.digest)
		}
	}
}
