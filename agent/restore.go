package agent

import (
	"bytes"
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

func (b *batch) restore(ctx context.Context, snap *pb.StateSnapshot) (*call, error) {
	c := b.newCall(ctx, snap.GetEntityKey(), snap.GetSnapshotAtMs())
	c.snapshot = snap
	if err := c.atomic(func(v *view, _ *hostapi.Outputs) error { return c.restore(v, snap) }); err != nil {
		return c, err
	}
	// A restored key is idle from the snapshot's time, as after an activation: without its
	// TTL it would keep its memory forever and never flush it (Definition.FlushOnExpiry). A
	// snapshot without a time arms none; its key expires after its next activation.
	if snap.GetSnapshotAtMs() > 0 {
		c.armTTL(c.now)
	}
	return c, nil
}

func (c *call) restore(v *view, snap *pb.StateSnapshot) error {
	if len(c.entity) == 0 {
		return fail(records.ReasonRestoreRefused, nil, "snapshot has no entity key")
	}
	for c := range numCells {
		b, err := v.raw(c)
		if err != nil {
			return err
		}
		if len(b) > 0 {
			return fail(records.ReasonRestoreRefused, nil, "key already has state (cell %s)", c)
		}
	}
	seq, err := statecodec.EncodeSeq(snap.GetSeq())
	if err != nil {
		return fail(records.ReasonRestoreRefused, err, "seq")
	}
	var writes [numCells][]byte
	writes[seqCell] = seq
	for c, m := range map[cell]proto.Message{memoryCell: snap.GetMemory(), cacheCell: snap.GetLlmCache(), contCell: snap.GetContinuation()} {
		if !m.ProtoReflect().IsValid() {
			continue
		}
		if writes[c], err = (proto.MarshalOptions{Deterministic: true}).Marshal(m); err != nil {
			return fail(records.ReasonRestoreRefused, err, "%s", c)
		}
	}
	pending := statecodec.NewPending()
	for _, ti := range snap.GetPending() {
		if err := pending.Add(ti); err != nil {
			return fail(records.ReasonRestoreRefused, err, "pending intent %s", ti.GetIntentId())
		}
	}
	if writes[pendingCell], err = pending.Encode(); err != nil {
		return fail(records.ReasonRestoreRefused, err, "pending intents")
	}
	if inbox := snap.GetInbox(); len(inbox) > 0 {
		if len(writes[contCell]) == 0 {
			return fail(records.ReasonRestoreRefused, nil, "an inbox without a suspension")
		}
		for i, env := range inbox {
			if err := checkEnvelope(env); err != nil || env.GetExternalEvent() == nil && env.GetSignal() == nil || !bytes.Equal(env.GetEntityKey(), c.entity) {
				return fail(records.ReasonRestoreRefused, err, "inbox envelope %d is not an external event or a signal of the key", i)
			}
		}
		if writes[inboxCell], err = (proto.MarshalOptions{Deterministic: true}).Marshal(&pb.AgentInbox{Envelopes: inbox}); err != nil {
			return fail(records.ReasonRestoreRefused, err, "inbox")
		}
	}
	if len(writes[contCell]) > 0 && snap.GetContinuation().GetDeadlineMs() == 0 {
		return fail(records.ReasonRestoreRefused, nil, "continuation without a deadline")
	}
	// Validated: the writes are committed as the call's result, verbatim.
	for c, b := range writes {
		if len(b) > 0 {
			v.cells.write(cell(c), b)
		}
	}
	return nil
}
