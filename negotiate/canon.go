package negotiate

// Digest domains: each record kind hashes under its own domain, so a digest of one kind is
// never mistaken for a digest of another.
const (
	deltaDomain    = "beam_agents.negotiate delta.v1\x00"
	manifestDomain = "beam_agents.negotiate manifest.v1\x00"
	receiptDomain  = "beam_agents.negotiate receipt.v1\x00"
	dialectDomain  = "beam_agents.negotiate provider_dialect.v1\x00"
	// outputDomain is none: an output's digest is the plain SHA-256 of its bytes, which a
	// receiver recomputes over the bytes it received without knowing anything of this package.
	outputDomain = ""
)
