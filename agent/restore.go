package agent

import (
	"context"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// Restore writes a StateSnapshot into a key that has no state yet: the counter, memory,
// replay cache, continuation and pending intents, blobs verbatim (no migration, exactly as an
// export carries them), so a key exported here or by another runtime sharing the wire format
// continues where it was. A key that already has state is left untouched and the restore
// becomes a restore_refused dead letter. A restored suspension gets its deadline timer.
func (a *Agent) Restore(ctx context.Context, store Store, snap *pb.StateSnapshot) (*Result, error) {
	entity := snap.GetEntityKey()
	c := a.newCall(ctx, store, entity, snap.GetSnapshotAtMs(), Deps{})
	c.snapshot = snap
	err := c.atomic(func(v *view, _ *Outputs) error { return c.restore(v, snap) })
	return c.finish(), err
}

func (c *call) restore(v *view, snap *pb.StateSnapshot) error {
	if len(c.entity) == 0 {
		return fail(ReasonRestoreRefused, nil, "snapshot has no entity key")
	}
	for _, cell := range Cells() {
		b, err := v.raw(cell)
		if err != nil {
			return err
		}
		if len(b) > 0 {
			return fail(ReasonRestoreRefused, nil, "key already has state (cell %s)", cell)
		}
	}
	seq, err := statecodec.EncodeSeq(snap.GetSeq())
	if err != nil {
		return fail(ReasonRestoreRefused, err, "seq")
	}
	writes := map[statecodec.Cell][]byte{seqCell: seq}
	for cell, m := range map[statecodec.Cell]proto.Message{memoryCell: snap.GetMemory(), cacheCell: snap.GetLlmCache(), contCell: snap.GetContinuation()} {
		if !m.ProtoReflect().IsValid() {
			continue
		}
		if writes[cell], err = (proto.MarshalOptions{Deterministic: true}).Marshal(m); err != nil {
			return fail(ReasonRestoreRefused, err, "%s", cell)
		}
	}
	pending := statecodec.NewPending()
	for _, ti := range snap.GetPending() {
		if err := pending.Add(ti); err != nil {
			return fail(ReasonRestoreRefused, err, "pending intent %s", ti.GetIntentId())
		}
	}
	if writes[pendingCell], err = pending.Encode(); err != nil {
		return fail(ReasonRestoreRefused, err, "pending intents")
	}
	if len(writes[contCell]) > 0 && snap.GetContinuation().GetDeadlineMs() == 0 {
		return fail(ReasonRestoreRefused, nil, "continuation without a deadline")
	}
	// Validated: the writes are committed as the call's result, verbatim.
	for cell, b := range writes {
		if len(b) > 0 {
			v.cells.overlay[cell] = b
		}
	}
	return nil
}
