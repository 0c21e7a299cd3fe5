package langchaingo_test

import (
	"testing"

	"github.com/beamagents/beamagents/adapters/langchaingo/example/lcdevices"
	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

// `go build ./example`, and the binary against an OpenAI-compatible server answering with
// native tool calls: the same end-to-end check as the bundled devices agent's.
func TestExampleBinary(t *testing.T) {
	conformance.CheckBinary(t, conformance.Build(t, ".", "./example"), lcdevices.Name)
}

// The langchaingo devices agent's cost per key against the native handler's, on the tool
// scenario, in the same run.
func BenchmarkOverhead(b *testing.B) { conformance.Bench(b, lcdevices.Name) }
