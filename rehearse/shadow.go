package rehearse

import (
	"bytes"
	"cmp"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
)

// The live counterpart of a rehearsal: a shadow agent runs beside production on the same
// stream, and a keyed step compares, per key, the outputs both made for each firing of an
// activation (transforms.CompareShadow keeps ShadowItems in keyed state and calls Settle).
// The comparison is a rehearsal's (Compared, DivergenceOf): intents without their
// signatures, final replies whole, dead letters by reason, traces not at all.

// maxDiverged bounds ShadowCompareState.diverged: the activations whose later firings are
// passed over are the latest few.
const maxDiverged = 16

// consequences are the dead letters a shadow makes because it diverged earlier: production's
// answers refused or orphaned by a shadow waiting on other calls, and the deadline of a call
// production never made. A shadow-only one of these is not a divergence of its own.
var consequences = map[string]bool{
	string(records.ReasonOrphanedResult):    true,
	string(records.ReasonResultRefused):     true,
	string(records.ReasonApprovalRefused):   true,
	string(records.ReasonApprovalUnknown):   true,
	string(records.ReasonActivationTimeout): true,
	string(records.ReasonApprovalTimeout):   true,
}

// Compared is output o as a rehearsal compares it (replay.Diff): ok is false for a trace,
// which is never compared; an intent (and a snapshot's pending intents) loses its signature.
func Compared(o replay.Output) (replay.Output, bool) { return compared(o) }

// DivergenceOf is output o described as a divergence of its kind: missing when it is the
// baseline's (production's) and the candidate did not produce it.
func DivergenceOf(o replay.Output, missing bool) Divergence { return divergence(o, missing) }

// NewShadowItem is one output of production (shadow false) or of the shadow, of kind (an
// intent, a final reply or a dead letter) and emitted at event time atMs, as the comparing
// step keeps it. ok is false for any other kind, and for bytes that do not decode.
func NewShadowItem(shadow bool, kind int64, b []byte, atMs int64) (it *pb.ShadowItem, ok bool) {
	it = &pb.ShadowItem{Shadow: shadow, Kind: kind, AtMs: atMs, Output: b}
	switch kind {
	case records.OutIntent:
		ti := &pb.ToolIntent{}
		if proto.Unmarshal(b, ti) != nil {
			return nil, false
		}
		c, _ := compared(replay.Output{Kind: kind, Bytes: b})
		it.Seq, it.StepIndex, it.Compared = ti.GetSeq(), ti.GetStepIndex(), c.Bytes
	case records.OutFinal:
		f := &pb.FinalReply{}
		if proto.Unmarshal(b, f) != nil {
			return nil, false
		}
		it.Seq, it.StepIndex, it.Compared = f.GetSeq(), f.GetStepIndex(), b
	case records.OutDeadLetter:
		d := &pb.ActivationErrorRecord{}
		if proto.Unmarshal(b, d) != nil {
			return nil, false
		}
		it.Compared = []byte(d.GetReason())
	default:
		return nil, false
	}
	return it, true
}

// Settle compares the items of st settled by event time now (emitted at or before now -
// graceMs), removes them from st and returns one ShadowComparison per firing compared, in
// event-time order: the outputs of one activation's firing (intents and final replies of one
// seq at one event time), or the dead letters of one event time. A firing's first difference
// is its divergence, and marks its activation divergent: the activation's later firings are
// passed over (the shadow runs on, from its next external event). A shadow-only dead letter
// that follows from an earlier divergence (see consequences) is passed over too. The same
// items give the same comparisons whatever order they arrived in.
func Settle(st *pb.ShadowCompareState, nowMs, graceMs int64) []*pb.ShadowComparison {
	var settled, kept []*pb.ShadowItem
	for _, it := range st.GetItems() {
		if it.GetAtMs()+graceMs <= nowMs {
			settled = append(settled, it)
		} else {
			kept = append(kept, it)
		}
	}
	st.Items = kept
	slices.SortStableFunc(settled, itemOrder)
	var out []*pb.ShadowComparison
	for len(settled) > 0 {
		n := 1
		for n < len(settled) && sameFiring(settled[0], settled[n]) {
			n++
		}
		if c := compareFiring(st, settled[:n]); c != nil {
			out = append(out, c)
		}
		settled = settled[n:]
	}
	return out
}

// Wake is the event time st's timer must fire at: the earliest an unsettled item settles, 0
// when none is left.
func Wake(st *pb.ShadowCompareState, graceMs int64) int64 {
	var w int64
	for i, it := range st.GetItems() {
		if t := it.GetAtMs() + graceMs; i == 0 || t < w {
			w = t
		}
	}
	return w
}

// dead reports whether it is a dead letter, which names no activation.
func dead(it *pb.ShadowItem) bool { return it.GetKind() == records.OutDeadLetter }

func sameFiring(a, b *pb.ShadowItem) bool {
	return a.GetAtMs() == b.GetAtMs() && dead(a) == dead(b) && (dead(a) || a.GetSeq() == b.GetSeq())
}

// itemOrder orders items by firing (event time, activation; dead letters after), then by
// step, kind and bytes: the order a firing's outputs are compared in.
func itemOrder(a, b *pb.ShadowItem) int {
	return cmp.Or(cmp.Compare(a.GetAtMs(), b.GetAtMs()), cmpBool(dead(a), dead(b)), cmp.Compare(a.GetSeq(), b.GetSeq()),
		cmp.Compare(a.GetStepIndex(), b.GetStepIndex()), cmp.Compare(a.GetKind(), b.GetKind()), bytes.Compare(a.GetCompared(), b.GetCompared()),
		cmpBool(a.GetShadow(), b.GetShadow()))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareFiring compares one firing's items of both sides; nil when it is passed over.
func compareFiring(st *pb.ShadowCompareState, items []*pb.ShadowItem) *pb.ShadowComparison {
	first := items[0]
	c := &pb.ShadowComparison{Seq: first.GetSeq(), EventTimeMs: first.GetAtMs()}
	if !dead(first) && slices.Contains(st.GetDiverged(), first.GetSeq()) {
		return nil
	}
	var prod, shadow []*pb.ShadowItem
	for _, it := range items {
		if it.GetShadow() {
			shadow = append(shadow, it)
		} else {
			prod = append(prod, it)
		}
	}
	if dead(first) {
		c.Seq = 0
		shadow = slices.DeleteFunc(shadow, func(it *pb.ShadowItem) bool {
			return consequences[string(it.GetCompared())] && !slices.ContainsFunc(prod, func(p *pb.ShadowItem) bool { return bytes.Equal(p.GetCompared(), it.GetCompared()) })
		})
		if len(prod)+len(shadow) == 0 {
			return nil
		}
	}
	var d *Divergence
	for i := 0; i < max(len(prod), len(shadow)) && d == nil; i++ {
		switch {
		case i >= len(prod):
			d = describe(shadow[i], false)
		case i >= len(shadow):
			d = describe(prod[i], true)
		case !bytes.Equal(prod[i].GetCompared(), shadow[i].GetCompared()) || prod[i].GetKind() != shadow[i].GetKind():
			d = describe(shadow[i], false)
		}
	}
	if d == nil {
		return c
	}
	c.Kind, c.StepIndex, c.Missing, c.Detail = string(d.Kind), d.Step, d.Missing, d.Detail
	if !dead(first) {
		st.Diverged = append(st.Diverged, first.GetSeq())
		if n := len(st.Diverged); n > maxDiverged {
			st.Diverged = slices.Clone(st.Diverged[n-maxDiverged:])
		}
	}
	return c
}

// describe is it as a rehearsal describes a divergence; a dead letter is placed at its
// firing's step.
func describe(it *pb.ShadowItem, missing bool) *Divergence {
	d := divergence(replay.Output{Kind: it.GetKind(), Bytes: it.GetOutput()}, missing)
	if dead(it) {
		d.Seq, d.Step = 0, 0
	}
	return &d
}
