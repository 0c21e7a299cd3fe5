package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

// batch runs several inputs of one key, in order, against the key's committed state in a
// Store (host.Batch): each input is atomic and sees what the inputs before it committed. Each cell is read from the store at most
// once, and the decoded memory and replay cache are kept from one input to the next. Writes
// and Timers are what the whole batch changed, to commit once. A batch is not safe for
// concurrent use.
type batch struct {
	a     *Agent
	store hostapi.Store
	deps  hostapi.Deps

	cells       [numCells][]byte  // as read from the store, or as the batch's inputs wrote them
	read, wrote cellSet           // cells read from the store; cells written
	live        liveCells         // decoded values of cells
	timers      []hostapi.TimerOp // the last timer operation of the inputs per tag
	deferred    bool              // see DeferEncoding
}

// newBatch starts a batch over the key's committed state in store (host.NewBatch).
func (a *Agent) newBatch(store hostapi.Store, deps hostapi.Deps) *batch {
	return &batch{a: a, store: store, deps: deps}
}

// Activate runs one envelope (host.Activate).
func (b *batch) Activate(ctx context.Context, env *pb.AgentEnvelope) (*hostapi.Result, error) {
	return b.end(b.activate(ctx, env))
}

// Fire runs one firing of the key's timer (host.Fire).
func (b *batch) Fire(ctx context.Context, entity []byte, tag string, atMs int64) (*hostapi.Result, error) {
	return b.end(b.fire(ctx, entity, tag, atMs))
}

// Restore restores a snapshot into the key (host.Restore).
func (b *batch) Restore(ctx context.Context, snap *pb.StateSnapshot) (*hostapi.Result, error) {
	return b.end(b.restore(ctx, snap))
}

// DeferEncoding makes the batch encode its memory and replay cache only when Writes asks for
// them, instead of after every input that changed them; the results of its inputs then carry
// no Writes. For a caller that commits once, after many inputs of the key.
func (b *batch) DeferEncoding() { b.deferred = true }

// Writes returns the cells the batch changed, by state id (an empty value clears the cell);
// nil when it changed none.
//
// With DeferEncoding, Writes encodes the changed memory and replay cache. Their encoding
// cannot fail, since every string in them was checked when it entered them (the runtime's
// deterministic serialization refuses only invalid UTF-8); should it fail all the same, Writes
// panics rather than commit a state that was never decided.
func (b *batch) Writes() map[statecodec.Cell][]byte {
	for c := range numCells {
		if err := b.live.materialize(c, &b.cells[c]); err != nil {
			panic(err)
		}
	}
	return byID(&b.cells, b.wrote)
}

// Timers returns the batch's timer operations, the last one per tag, ordered by tag.
func (b *batch) Timers() []hostapi.TimerOp {
	ops := slices.Clone(b.timers)
	slices.SortFunc(ops, func(x, y hostapi.TimerOp) int { return strings.Compare(x.Tag, y.Tag) })
	return ops
}

// end applies a call's result to the batch.
func (b *batch) end(c *call, err error) (*hostapi.Result, error) {
	res := c.finish()
	for i := range numCells {
		if c.cells.wrote.has(i) {
			b.cells[i] = c.cells.overlay[i]
			b.live.set(i, c.cells.liveVals.vals[i], c.cells.liveVals.stale.has(i))
			b.wrote = b.wrote.with(i)
		}
	}
	for _, op := range res.Timers {
		if i := slices.IndexFunc(b.timers, func(t hostapi.TimerOp) bool { return t.Tag == op.Tag }); i >= 0 {
			b.timers[i] = op
		} else {
			b.timers = append(b.timers, op)
		}
	}
	return res, err
}

// committed returns cell c as the batch's previous inputs left it.
func (b *batch) committed(c cell) ([]byte, error) {
	if (b.read | b.wrote).has(c) {
		err := b.live.materialize(c, &b.cells[c])
		return b.cells[c], err
	}
	v, err := b.store.Read(cellTable[c].id)
	if err != nil {
		return nil, &Error{Reason: records.ReasonStateCorrupt, Detail: "reading " + c.String(), Err: err}
	}
	b.cells[c], b.read = v, b.read.with(c)
	return v, nil
}
