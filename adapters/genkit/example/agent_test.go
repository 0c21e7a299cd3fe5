package main

import (
	"testing"

	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

// The Genkit agent on the demo traffic is the native devices agent, byte for byte (its name
// apart).
func TestSameAsNative(t *testing.T) {
	def, err := Definition(nil)
	if err != nil {
		t.Fatal(err)
	}
	conformance.SameAsNative(t, def)
}

// A model that never stops calling tools ends in budget_exceeded after devices.MaxTurns
// model calls, as the native agent does.
func TestTurnLimitAsNative(t *testing.T) { conformance.TurnLimitAsNative(t, New) }
