package host

import (
	"context"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// Batch runs several inputs of one key, in order, against the key's committed state in a
// Store: each input is atomic exactly as with Activate, Fire and Restore, and sees what the
// inputs before it committed. Each cell is read from the store at most once, and the decoded
// memory and replay cache are kept from one input to the next. Writes and Timers are what the
// whole batch changed, to commit once.
//
// A Batch is a handle made by NewBatch (its zero value runs nothing): copies share one batch,
// which is not safe for concurrent use. It is a value so that opening one costs no allocation
// beyond the batch itself.
type Batch struct{ b hostapi.Batch }

// NewBatch starts a batch over the key's committed state in store.
func NewBatch(a *agent.Agent, store Store, deps Deps) Batch {
	return Batch{core.NewBatch(a, store, deps)}
}

// Activate runs one envelope (see Activate).
func (b Batch) Activate(ctx context.Context, env *pb.AgentEnvelope) (*Result, error) {
	return b.b.Activate(ctx, env)
}

// ActivateBurst runs the external events of one burst (package agent/burst), in processing order,
// as one activation at the key's seq: the handler's trigger lists them all
// (agent.Trigger.Events). One event is Activate's. A suspended key queues each in its inbox.
// A failed burst commits nothing and dead-letters each event, with its envelope.
func (b Batch) ActivateBurst(ctx context.Context, envs []*pb.AgentEnvelope) (*Result, error) {
	return b.b.ActivateBurst(ctx, envs)
}

// Fire runs one firing of the key's timer (see Fire).
func (b Batch) Fire(ctx context.Context, entity []byte, tag string, atMs int64) (*Result, error) {
	return b.b.Fire(ctx, entity, tag, atMs)
}

// Restore restores a snapshot into the key (see Restore).
func (b Batch) Restore(ctx context.Context, snap *pb.StateSnapshot) (*Result, error) {
	return b.b.Restore(ctx, snap)
}

// DeferEncoding makes the batch encode its memory and replay cache only when Writes asks for
// them, instead of after every input that changed them; the results of its inputs then carry
// no Writes. For a caller that commits once, after many inputs of the key.
func (b Batch) DeferEncoding() { b.b.DeferEncoding() }

// Writes returns the cells the batch changed, by state id (an empty value clears the cell);
// nil when it changed none.
//
// With DeferEncoding, Writes encodes the changed memory and replay cache. Their encoding
// cannot fail, since every string in them was checked when it entered them (the runtime's
// deterministic serialization refuses only invalid UTF-8); should it fail all the same, Writes
// panics rather than commit a state that was never decided.
func (b Batch) Writes() map[statecodec.Cell][]byte { return b.b.Writes() }

// Timers returns the batch's timer operations, the last one per tag, ordered by tag.
func (b Batch) Timers() []TimerOp { return b.b.Timers() }
