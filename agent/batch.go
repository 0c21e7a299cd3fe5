package agent

import (
	"context"
	"maps"
	"slices"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// Batch runs several inputs of one key, in order, against the key's committed state in a
// Store: each input is atomic exactly as with Agent.Activate, Agent.Fire and Agent.Restore,
// and sees what the inputs before it committed. Each cell is read from the store at most
// once. Writes and Timers are what the whole batch changed, to commit once. A Batch is not
// safe for concurrent use.
type Batch struct {
	a     *Agent
	store Store
	deps  Deps

	cells       [numCells][]byte // as read from the store, or as the batch's inputs wrote them
	read, wrote cellSet          // cells read from the store; cells written
	timers      []TimerOp        // every timer operation of the inputs, in order
}

// NewBatch starts a batch over the key's committed state in store.
func (a *Agent) NewBatch(store Store, deps Deps) *Batch {
	return &Batch{a: a, store: store, deps: deps}
}

// Activate runs one envelope (see Agent.Activate).
func (b *Batch) Activate(ctx context.Context, env *pb.AgentEnvelope) (*Result, error) {
	return b.end(b.activate(ctx, env))
}

// Fire runs one firing of the key's timer (see Agent.Fire).
func (b *Batch) Fire(ctx context.Context, entity []byte, tag string, atMs int64) (*Result, error) {
	return b.end(b.fire(ctx, entity, tag, atMs))
}

// Restore restores a snapshot into the key (see Agent.Restore).
func (b *Batch) Restore(ctx context.Context, snap *pb.StateSnapshot) (*Result, error) {
	return b.end(b.restore(ctx, snap))
}

// Writes returns the cells the batch changed, by state id (an empty value clears the cell);
// nil when it changed none.
func (b *Batch) Writes() map[statecodec.Cell][]byte {
	if b.wrote == 0 {
		return nil
	}
	m := make(map[statecodec.Cell][]byte, b.wrote.len())
	for c := range numCells {
		if b.wrote.has(c) {
			m[cellTable[c].id] = b.cells[c]
		}
	}
	return m
}

// Timers returns the batch's timer operations, the last one per tag, ordered by tag.
func (b *Batch) Timers() []TimerOp {
	last := map[string]TimerOp{}
	for _, op := range b.timers {
		last[op.Tag] = op
	}
	ops := make([]TimerOp, 0, len(last))
	for _, tag := range slices.Sorted(maps.Keys(last)) {
		ops = append(ops, last[tag])
	}
	return ops
}

// end applies a call's result to the batch.
func (b *Batch) end(c *call, err error) (*Result, error) {
	res := c.finish()
	for i := range numCells {
		if c.cells.wrote.has(i) {
			b.cells[i] = c.cells.overlay[i]
			b.wrote = b.wrote.with(i)
		}
	}
	b.timers = append(b.timers, res.Timers...)
	return res, err
}

// committed returns cell c as the batch's previous inputs left it.
func (b *Batch) committed(c cell) ([]byte, error) {
	if (b.read | b.wrote).has(c) {
		return b.cells[c], nil
	}
	v, err := b.store.Read(cellTable[c].id)
	if err != nil {
		return nil, &Error{Reason: ReasonStateCorrupt, Detail: "reading " + c.String(), Err: err}
	}
	b.cells[c], b.read = v, b.read.with(c)
	return v, nil
}
