package effector

import (
	"maps"
	"sync"

	"github.com/beamagents/beamagents/intent"
)

// Counter names; stable API.
const (
	CountExecuted      = "executed"            // tools run (OK or ERROR)
	CountToolErrors    = "tool_errors"         // of which the tool failed
	CountDeduplicated  = "deduplicated"        // redeliveries answered from the store
	CountExpired       = "expired"             // refused: past expires_at_ms
	CountRejected      = "rejected"            // refused: REJECTED, all reasons
	CountTakenOver     = "taken_over"          // claims taken over from a crashed owner
	CountApprovals     = "approvals"           // APPROVAL intents received (never executed)
	CountDecisions     = "decisions"           // approval decisions published
	CountMalformed     = "malformed"           // input that is not an intent at all
	CountIDConflicts   = "intent_id_conflicts" // refused: an id already taken by another call
	CountUnchecked     = "dedup_unchecked"     // redeliveries answered from a record without a digest
	CountHeldBack      = "held_back"           // intents for a tool no registered agent provides: not recorded
	CountShadowRefused = "shadow_refused"      // a shadow agent's intents: refused, no result
	prefixRejected     = "rejected_"           // + reason
	prefixSignature    = "signature_"          // + intent.Outcome
	countSignatureOff  = "signature_off"       // verification off: not checked
)

// Metrics are the effector's counters, safe for concurrent use.
type Metrics struct {
	mu sync.Mutex
	m  map[string]int64
}

func (m *Metrics) add(name string, n int64) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[string]int64{}
	}
	m.m[name] += n
	m.mu.Unlock()
}

func (m *Metrics) signature(o intent.Outcome) { m.add(prefixSignature+o.String(), 1) }

func (m *Metrics) rejected(reason string) {
	m.add(CountRejected, 1)
	m.add(prefixRejected+reason, 1)
}

// Snapshot returns a copy of the counters. Every headline counter is present, zero or not.
func (m *Metrics) Snapshot() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int64{CountExecuted: 0, CountDeduplicated: 0, CountExpired: 0, CountRejected: 0}
	maps.Copy(out, m.m)
	return out
}
