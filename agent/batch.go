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

	base, changed [numCells][]byte
	read, wrote   cellSet
	timers        map[string]TimerOp
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
	m := make(map[statecodec.Cell][]byte, numCells)
	for c := range numCells {
		if b.wrote.has(c) {
			m[cellTable[c].id] = b.changed[c]
		}
	}
	return m
}

// Timers returns the batch's timer operations, the last one per tag, ordered by tag.
func (b *Batch) Timers() []TimerOp {
	ops := make([]TimerOp, 0, len(b.timers))
	for _, tag := range slices.Sorted(maps.Keys(b.timers)) {
		ops = append(ops, b.timers[tag])
	}
	return ops
}

// end applies a call's result to the batch.
func (b *Batch) end(c *call, err error) (*Result, error) {
	res := c.finish()
	for i := range numCells {
		if c.cells.wrote.has(i) {
			b.changed[i] = c.cells.overlay[i]
			b.wrote = b.wrote.with(i)
		}
	}
	for _, op := range res.Timers {
		if b.timers == nil {
			b.timers = map[string]TimerOp{}
		}
		b.timers[op.Tag] = op
	}
	return res, err
}

// committed returns cell c as the batch's previous inputs left it.
func (b *Batch) committed(c cell) ([]byte, error) {
	if b.wrote.has(c) {
		return b.changed[c], nil
	}
	if b.read.has(c) {
		return b.base[c], nil
	}
	v, err := b.store.Read(cellTable[c].id)
	if err != nil {
		return nil, &Error{Reason: ReasonStateCorrupt, Detail: "reading " + c.String(), Err: err}
	}
	b.base[c], b.read = v, b.read.with(c)
	return v, nil
}
