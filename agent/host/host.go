package host

import (
	"context"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/internal/hostapi"
	"github.com/beamagents/beamagents/canary"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// core is what package agent lent this package in its init, which ran before this package's
// variables were initialized since this package imports agent.
var core = hostapi.Lent[*agent.Agent]()

// Activate runs the core for one envelope against the key's committed state in store.
//
// An activation is atomic: if it fails, the Result holds no writes from it and exactly one
// dead letter (with the ERROR trace event of a model call a circuit breaker refused), and
// the returned error is the typed *agent.Error behind that dead letter. Two outcomes are not
// failures of the input although they emit a dead letter: a queued inbox event whose own
// activation fails (the event leaves the inbox), and a deadline that fails closed (Fire).
// Every time the core uses is the envelope's event time.
func Activate(ctx context.Context, a *agent.Agent, store Store, env *pb.AgentEnvelope, deps Deps) (*Result, error) {
	return core.NewBatch(a, store, deps).Activate(ctx, env)
}

// Fire runs the core for one firing of the key's timer: tag TagDeadline or TagTTL, at event
// time atMs. A firing that no longer applies (the key resumed, or the deadline moved) changes
// nothing.
func Fire(ctx context.Context, a *agent.Agent, store Store, entity []byte, tag string, atMs int64, deps Deps) (*Result, error) {
	return core.NewBatch(a, store, deps).Fire(ctx, entity, tag, atMs)
}

// Restore writes a StateSnapshot into a key that has no state yet: the counter, memory,
// replay cache, continuation, pending intents and inbox, blobs verbatim (no migration,
// exactly as an export carries them), so a key exported here or by another runtime sharing
// the wire format continues where it was. A key that already has state is left untouched and
// the restore becomes a restore_refused dead letter. A restored suspension gets its deadline
// timer, and every restored key its idle TTL from the snapshot's time (snapshot_at_ms; none
// when it is 0).
func Restore(ctx context.Context, a *agent.Agent, store Store, snap *pb.StateSnapshot) (*Result, error) {
	return core.NewBatch(a, store, Deps{}).Restore(ctx, snap)
}

// DeadLetter builds the dead letter of err for entity at event time atMs (records.DeadLetter):
// the reason of the *agent.Error inside err (internal_panic for an untyped error), and err's
// text as the detail.
func DeadLetter(entity []byte, atMs int64, err error) *pb.ActivationErrorRecord {
	return core.DeadLetter(entity, atMs, err)
}

// Cells lists every state cell an agent uses, in a fixed order.
func Cells() []statecodec.Cell { return core.Cells() }

// CellField returns the field of m, the combined encoding of a key's cells, that holds cell
// id; nil for an id that is not one of Cells.
func CellField(m *pb.AgentStateCells, id statecodec.Cell) *[]byte { return core.CellField(m, id) }

// WithCanary returns the agent baseline routing the keys of slice (package canary) to
// candidate, for a run with a canary: an activation that starts (an external event, from
// the envelope or the inbox, on a key that is not suspended) runs on candidate when its key
// is in slice, else on baseline; an activation that resumes (a tool result, an approval, a
// signal, a deadline) runs on the agent that started it, whatever the slice is now, so a
// relaunch with another slice never switches an activation mid-journal. Every suspension
// records the agent that started it (the continuation's agent); one without a record (a run
// without a canary) or naming neither agent resumes on baseline. The agent is used as any
// other: Activate, Fire, Restore, NewBatch; its WithModel answers both agents with the model.
//
// Both agents keep one key's state in turn, so they must be at the same state schema version
// (the candidate reads the baseline's state and, after a rollback, the baseline the
// candidate's). WithCanary refuses with agent.ErrDefinition a candidate at another version,
// the baseline itself, an agent that already routes, or a slice over canary.Buckets.
func WithCanary(baseline, candidate *agent.Agent, slice canary.Slice) (*agent.Agent, error) {
	return core.WithCanary(baseline, candidate, slice)
}
