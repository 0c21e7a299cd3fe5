package main

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// devices-eino against the adapters' conformance scenarios, on Prism.
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Subject{Framework: "eino", Agent: Name})
}
