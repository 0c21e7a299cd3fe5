package negotiate

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/beamagents/beamagents/internal/canonjson"
)

// Digest domains: each record kind hashes under its own domain, so a digest of one kind is
// never mistaken for a digest of another.
const (
	deltaDomain    = "beam_agents.negotiate delta.v1\x00"
	manifestDomain = "beam_agents.negotiate manifest.v1\x00"
	receiptDomain  = "beam_agents.negotiate receipt.v1\x00"
	dialectDomain  = "beam_agents.negotiate provider_dialect.v1\x00"
)

func digestOf(domain string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write(body)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// sha256Of is the plain SHA-256 of output bytes, with no domain: a receiver recomputes it over
// the bytes it received without knowing anything of this package.
func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The delta, manifest and receipt documents are rendered by canonjson, the one canonical JSON
// writer the interaction documents use too; stringArray adapts a list of ids to it.
func stringArray(ss []string) canonjson.Array {
	a := make(canonjson.Array, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}
