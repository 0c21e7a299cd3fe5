package host

import (
	"github.com/beamagents/beamagents/agent/internal/hostapi"
)

// The plain types of a call of the core, declared where package agent's core can use them
// (package agent cannot import this package, which imports it).
type (
	// Store gives the core read access to one key's committed state cells. Read returns the
	// cell's bytes, empty for a cell never written. The core reads a cell only when the input
	// needs it, at most once per call.
	Store = hostapi.Store
	// MapStore is a Store over a map, for tests and tools; its Apply commits a Result's
	// writes (an empty value clears the cell).
	MapStore = hostapi.MapStore
	// Deps are the per-worker dependencies of activations, what must not travel inside a
	// pipeline graph: the keyring signing intents (or AllowUnsigned), the verification of
	// answers (VerifyResults), a recorded run answering inline tools (Recorded) and the
	// long-term memory store.
	Deps = hostapi.Deps
	// InlineRun is one inline tool run, as Deps.Recorded is asked for it.
	InlineRun = hostapi.InlineRun
	// Result is what one call of the core decided: its Outputs, the cells that changed
	// (Writes; an empty value clears the cell), its TimerOps, the cells it read, the model
	// calls it made and its codecs' stats. A failed activation contributes no writes and one
	// dead letter.
	Result = hostapi.Result
	// Outputs are an activation's emitted messages, in emission order.
	Outputs = hostapi.Outputs
	// TimerOp sets or clears one tagged timer of the key.
	TimerOp = hostapi.TimerOp
)

// Timer tags of the key's single event-time timer family.
const (
	TagDeadline = hostapi.TagDeadline // the suspension's deadline (and its escalations)
	TagTTL      = hostapi.TagTTL      // the idle-key garbage collection
)

// CellInbox is the state id of the inbox cell: external events that arrived while the key was
// suspended, encoded as beam_agents.v1.AgentInbox. Like statecodec's ids it is stable API.
const CellInbox = hostapi.CellInbox
