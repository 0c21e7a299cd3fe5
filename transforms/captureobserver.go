package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/budget"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statedir"
)

// An observer watches the effects a RunAgent step carries out; it is chosen once, at Setup.
type observer interface {
	// frozen reports whether a firing records its key instead of running (keysched.Freeze).
	frozen() bool
	// carried sees the effects e a call carried out (value is the element the step took, nil
	// for a firing), with the call's state as it committed it.
	carried(f *firing, value []byte, e *drive.Effects)
	// record records the key as it is at a frozen firing: its state through l, its buffer.
	record(f *firing, l layout, buffer [][]byte)
}

// observe returns the observer of Options.Capture: c's, or one that watches nothing when the
// capture is not in this process.
func observe(c *statedir.Capture) observer {
	if c == nil {
		return noObserver{}
	}
	return captureObserver{c}
}

type noObserver struct{}

func (noObserver) frozen() bool                            { return false }
func (noObserver) carried(*firing, []byte, *drive.Effects) {}
func (noObserver) record(*firing, layout, [][]byte)        {}

// captureObserver keeps keyed state across restarts on an in-process runner (Options.Capture,
// package statedir). Every key with state either has a Beam timer armed (its ordering
// bucket, its deadline, its idle TTL), which the drain's end-of-time watermark fires, or was
// recorded when it was left without one: when it was restored, or by a firing that left
// nothing armed and nothing buffered. Once the Capture is frozen, a firing records its key
// as it is (after carrying out a finished job) and runs nothing, so a suspension is kept,
// not failed closed; an envelope that arrives meanwhile only joins the buffer, which the
// key's next firing records.
type captureObserver struct{ c *statedir.Capture }

func (o captureObserver) frozen() bool { return o.c.Frozen() }

// carried records a restore the step applied (no dead letter): until the key runs again,
// its state is the snapshot; and the key's state after a firing that left no timer armed
// and nothing buffered.
func (o captureObserver) carried(f *firing, value []byte, e *drive.Effects) {
	if len(value) > 0 && value[0] == drive.RestoreMark {
		for _, out := range e.Outputs {
			if out.Kind == records.OutDeadLetter {
				return
			}
		}
		if in := drive.DecodeInput(f.key, value); in.Snapshot != nil {
			o.c.Put(f.key, statedir.Record{Snapshot: in.Snapshot})
		}
		return
	}
	if e.Rewrite && len(e.Bag) == 0 {
		o.record(f, f.layout, nil)
	}
}

// freeze records the key at a firing of a frozen run, after settling its job j (nil for none).
func (f *firing) freeze(j *stepJob) error {
	if j != nil {
		if err := f.settle(j); err != nil {
			return err
		}
	}
	cell, err := f.readCell()
	if err != nil {
		return err
	}
	buf, err := f.readBuffer()
	if err != nil {
		return err
	}
	f.obs.record(f, &combined{raw: cell, haveRaw: true}, buf)
	return nil
}

// record puts the key's state (through l; its snapshot carries its inbox) and the envelopes of
// its ordering buffer, which it has not run, into the Capture. It is the export an export
// request makes; a key whose state does not export (corrupt cells) is left out with its dead
// letter emitted.
func (o captureObserver) record(f *firing, l layout, buffer [][]byte) {
	store := layoutStore{f.sp, l}
	req := &pb.AgentEnvelope{EntityKey: f.key, EventTimeMs: max(f.now, 1),
		Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{}}}
	res, err := host.NewBatch(f.rt.agent, store, f.rt.deps).Activate(f.ctx, req)
	if err != nil || len(res.Snapshots) != 1 {
		for _, d := range res.DeadLetters {
			f.emit(mtime.FromMilliseconds(f.now), records.OutDeadLetter, drive.Marshal(d))
		}
		return
	}
	rec := statedir.Record{Snapshot: res.Snapshots[0], Envelopes: asInput(drive.Envelopes(buffer))}
	if empty(rec) {
		return
	}
	o.c.Put(f.key, rec)
}

// asInput turns each envelope of a key's ordering buffer back into the input it came as
// (budget.Unstamped): the restart reads them as input, which refuses a tenant budget's grant,
// and admits them again, against the tallies it starts with. The snapshot's inbox keeps its
// grants: those envelopes were admitted and run under them when the key resumes.
func asInput(envs [][]byte) [][]byte {
	for i, raw := range envs {
		env := &pb.AgentEnvelope{}
		if proto.Unmarshal(raw, env) != nil || env.GetBudgetGrant() == nil {
			continue
		}
		if b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(budget.Unstamped(env)); err == nil {
			envs[i] = b
		}
	}
	return envs
}

func empty(r statedir.Record) bool {
	s := r.Snapshot
	return len(r.Envelopes) == 0 && s.GetSeq() == 0 && s.GetMemory() == nil && s.GetLlmCache() == nil &&
		s.GetContinuation() == nil && len(s.GetPending()) == 0 && len(s.GetInbox()) == 0
}
