package conformance_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	_ "github.com/beamagents/beamagents/examples/devices"
	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// The kit's native implementation, and the bundled devices agent for the scenarios it has
// the shape for.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{Framework: "native", Agent: conformance.NativeAgent})
	conformance.Run(t, conformance.Subject{Framework: "devices", Agent: "devices", Lacks: map[string]string{
		conformance.ApprovalApproved:    "the devices example gates no tool behind an approval",
		conformance.ApprovalDenied:      "the devices example gates no tool behind an approval",
		conformance.ApprovalTimedOut:    "the devices example gates no tool behind an approval",
		conformance.TokenBudgetExceeded: "the devices example sets no token budget",
	}})
}

// The bundled command (cmd/beamagents) and its devices agent pass the end-to-end check the
// adapters' example binaries run.
func TestCheckBinary(t *testing.T) {
	conformance.CheckBinary(t, conformance.Build(t, "../../../cmd/beamagents", "."), "devices")
}

// The native handler against itself: the ratio's baseline (about 1).
func BenchmarkOverhead(b *testing.B) { conformance.Bench(b, conformance.NativeAgent) }
