package transforms

import (
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statedir"
)

// Keyed state kept across restarts on an in-process runner (Options.Capture, package
// statedir). Every key with state either has a Beam timer armed (its ordering bucket, its
// deadline, its idle TTL), which the drain's end-of-time watermark fires, or was recorded
// when it was left without one: when it was restored, or by a firing that left nothing
// armed and nothing buffered. Once the Capture is frozen, a firing records its key as it is
// (after carrying out a finished job) and runs nothing, so a suspension is kept, not failed
// closed; an envelope that arrives meanwhile only joins the buffer, which the key's next
// firing records.

// frozen reports whether this call is part of a frozen run: it records instead of running.
func (f *firing) frozen() bool { return f.rt.capture != nil && f.rt.capture.Frozen() }

// freeze records the key at a firing of a frozen run.
func (f *firing) freeze(tag string) error {
	if _, err := f.pending(tag, true); err != nil {
		return err
	}
	cell, err := f.readCell()
	if err != nil {
		return err
	}
	buf, err := f.readBuffer()
	if err != nil {
		return err
	}
	f.record(&combined{raw: cell, haveRaw: true}, buf)
	return nil
}

// recordRestore records a restore the step applied (no dead letter): until the key runs
// again, its state is the snapshot.
func (f *firing) recordRestore(raw []byte, e *drive.Effects) {
	if f.rt.capture == nil {
		return
	}
	for _, o := range e.Outputs {
		if o.Kind == drive.OutDeadLetter {
			return
		}
	}
	if in := drive.DecodeInput(f.key, raw); in.Snapshot != nil {
		f.rt.capture.Put(f.key, statedir.Record{Snapshot: in.Snapshot})
	}
}

// recordQuiet records the key's state after a firing that left no timer armed and nothing
// buffered (l holds the state as the firing committed it).
func (f *firing) recordQuiet(l layout, rewrite bool, rest []byte) {
	if f.rt.capture != nil && rewrite && len(rest) == 0 {
		f.record(l, nil)
	}
}

// record puts the key's state (through l) and the envelopes it has not run (its inbox, then
// its ordering buffer's) into the Capture. It is the export an export request makes; a key
// whose state does not export (corrupt cells) is left out with its dead letter emitted.
func (f *firing) record(l layout, buffer [][]byte) {
	store := layoutStore{f.sp, l}
	req := &pb.AgentEnvelope{EntityKey: f.key, EventTimeMs: max(f.now, 1),
		Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{}}}
	res, err := f.rt.agent.NewBatch(store, f.rt.deps).Activate(f.ctx, req)
	if err != nil || len(res.Snapshots) != 1 {
		for _, d := range res.DeadLetters {
			f.emit(mtime.FromMilliseconds(f.now), drive.OutDeadLetter, drive.Marshal(d))
		}
		return
	}
	rec := statedir.Record{Snapshot: res.Snapshots[0]}
	if b, err := store.Read(agent.CellInbox); err == nil && len(b) > 0 {
		inbox := &pb.AgentInbox{}
		if proto.Unmarshal(b, inbox) == nil {
			for _, env := range inbox.GetEnvelopes() {
				rec.Envelopes = append(rec.Envelopes, drive.Marshal(env))
			}
		}
	}
	due, _, _, _ := drive.Split(buffer, math.MaxInt64)
	for _, d := range due {
		rec.Envelopes = append(rec.Envelopes, d.Raw)
	}
	if empty(rec) {
		return
	}
	f.rt.capture.Put(f.key, rec)
}

func empty(r statedir.Record) bool {
	s := r.Snapshot
	return len(r.Envelopes) == 0 && s.GetSeq() == 0 && s.GetMemory() == nil && s.GetLlmCache() == nil &&
		s.GetContinuation() == nil && len(s.GetPending()) == 0
}
