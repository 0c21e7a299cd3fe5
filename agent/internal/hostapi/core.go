package hostapi

import (
	"context"

	"github.com/beamagents/beamagents/canary"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// Batch is package agent's batch as package host holds it: the inputs of one key, run in
// order against its committed state (host.Batch documents each method).
type Batch interface {
	Activate(ctx context.Context, env *pb.AgentEnvelope) (*Result, error)
	ActivateBurst(ctx context.Context, envs []*pb.AgentEnvelope) (*Result, error)
	Fire(ctx context.Context, entity []byte, tag string, atMs int64) (*Result, error)
	Restore(ctx context.Context, snap *pb.StateSnapshot) (*Result, error)
	DeferEncoding()
	Writes() map[statecodec.Cell][]byte
	Timers() []TimerOp
}

// Core is what package agent lends package host: its entry points that need the agent's
// internals, A being *agent.Agent (which this package, below agent, cannot name).
type Core[A any] struct {
	NewBatch   func(a A, store Store, deps Deps) Batch
	DeadLetter func(entity []byte, atMs int64, err error) *pb.ActivationErrorRecord
	Cells      func() []statecodec.Cell
	CellField  func(m *pb.AgentStateCells, id statecodec.Cell) *[]byte
	WithCanary func(a, candidate A, slice canary.Slice) (A, error)
}

// lent is the Core package agent set in its init.
var lent any

// Lend is called once, by package agent's init.
func Lend[A any](c *Core[A]) { lent = c }

// Lent returns the Core package agent lent. Package host reads it when it is initialized,
// which is after package agent's init, since host imports agent.
func Lent[A any]() *Core[A] { return lent.(*Core[A]) }
