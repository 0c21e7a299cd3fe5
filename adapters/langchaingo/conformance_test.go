package langchaingo_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/adapters/langchaingo/example/lcdevices"
	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// The devices example written with langchaingo, against the conformance scenarios.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{Framework: "langchaingo", Agent: lcdevices.Name})
}
