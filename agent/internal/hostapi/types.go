package hostapi

import (
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/statecodec"
)

// CellInbox is the state id of the inbox cell: external events that arrived while the key was
// suspended, encoded as beam_agents.v1.AgentInbox. Like statecodec's ids it is stable API.
const CellInbox statecodec.Cell = "inbox.v1"

// Store gives the core read access to one key's committed state cells. Read returns the
// cell's bytes, empty for a cell never written. The core reads a cell only when the input
// needs it, at most once per call.
type Store interface {
	Read(cell statecodec.Cell) ([]byte, error)
}

// MapStore is a Store over a map, for tests and tools; Apply commits a Result's writes.
type MapStore map[statecodec.Cell][]byte

// Read returns the cell's bytes.
func (m MapStore) Read(c statecodec.Cell) ([]byte, error) { return m[c], nil }

// Apply writes r's cells: an empty value clears the cell.
func (m MapStore) Apply(r *Result) {
	for c, b := range r.Writes {
		if len(b) == 0 {
			delete(m, c)
			continue
		}
		m[c] = b
	}
}

// Timer tags of the key's single event-time timer family.
const (
	TagDeadline = "deadline" // the suspension's deadline (and its escalations)
	TagTTL      = "ttl"      // the idle-key garbage collection
)

// TimerOp sets or clears one tagged timer of the key.
type TimerOp struct {
	Tag  string
	Set  bool  // false clears the timer
	AtMs int64 // event time of the firing, when Set
}

// Outputs are an activation's emitted messages, in emission order.
type Outputs struct {
	Intents     []*pb.ToolIntent
	Traces      []*pb.TraceEvent
	Finals      []*pb.FinalReply
	Snapshots   []*pb.StateSnapshot
	DeadLetters []*pb.ActivationErrorRecord
}

// Result is what one call of the core decided. Writes holds only the cells that changed (an
// empty value clears the cell); a failed activation contributes no writes and one dead letter
// (with the ERROR trace events of model calls a circuit breaker refused).
type Result struct {
	Outputs
	Writes map[statecodec.Cell][]byte
	Timers []TimerOp
	// Reads lists the cells the call read, in order; ModelCalls counts calls that reached the
	// model (cache hits excluded); Stats sums what the cell codecs repaired and evicted.
	Reads      []statecodec.Cell
	ModelCalls int
	Stats      statecodec.Stats
}

// Deps are the per-worker dependencies of activations: what must not travel inside a
// pipeline graph.
type Deps struct {
	// Keyring signs every emitted intent; without one, an activation that emits an intent
	// fails with signing_failed, unless AllowUnsigned.
	Keyring *intent.Keyring
	// AllowUnsigned emits intents unsigned when there is no Keyring. Consumers verifying in
	// intent.ModePermissive or intent.ModeOff accept them; intent.ModeRequire refuses them.
	AllowUnsigned bool
	// Shadow makes the activations a shadow's (an agent run beside production on the same
	// stream): every intent is emitted unsigned and marked (intent.MarkShadow), so no
	// effector executes it, and Keyring only verifies answers (VerifyResults).
	Shadow bool
	// VerifyResults, when set, checks every tool result and approval that answers a pending
	// intent under its mode against Keyring before it may resume the activation: its
	// signature and its binding to that exact intent (intent.Mode.CheckResult, CheckApproval).
	// A refused one is a result_refused or approval_refused dead letter and changes nothing:
	// the key stays suspended until its deadline. Nil admits them unchecked (intent.ModeOff).
	VerifyResults *intent.Mode
	// Recorded, when set, answers each inline tool run the key's replay cache does not hold
	// from a recorded run instead of running the tool (offline replay): it returns the run's
	// recorded replay-cache entry. A run it cannot answer fails, journaled like any inline
	// failure, and the tool is not run: a replay never repeats an inline tool.
	Recorded func(InlineRun) ([]byte, bool)
	// LongTermMemory is the store of the handlers' Context.Recall and Remember; without one
	// they fail with memory_store_failed.
	LongTermMemory ltm.Store
}

// InlineRun is one inline tool run, as Deps.Recorded is asked for it.
type InlineRun struct {
	Entity   []byte
	Seq      int64
	Step     uint32 // the run's position in the activation
	Tool     string
	CacheKey string // the run's replay-cache key
}
