package lcdevices

import (
	"testing"

	"github.com/beamagents/beamagents/internal/testkit/conformance"
)

// A model that never stops calling tools ends in budget_exceeded after devices.MaxTurns
// model calls, as the native agent does.
func TestTurnLimitAsNative(t *testing.T) { conformance.TurnLimitAsNative(t, New) }
