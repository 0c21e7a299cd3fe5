package rehearse

import (
	"fmt"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
)

// key is one key's rehearsal as it runs.
type key struct {
	entity  []byte
	base    map[int64][][]byte // the baseline's outputs of the key
	inline  map[string]bool    // the tools the baseline ran inline for the key
	outputs []replay.Output    // the candidate's, up to its stop
	events  []event            // divergences seen while running, in order
	stop    Stop
	tools   map[string]bool // tools the candidate called

	answered, inlined, liveCalls int
	liveTokens                   int64
}

// event is a divergence seen before the output at position at.
type event struct {
	at int
	d  Divergence
}

func newKey(entity []byte, base map[int64][][]byte, inline map[string]bool) *key {
	return &key{entity: entity, base: base, inline: inline, tools: map[string]bool{}}
}

func (k *key) note(d Divergence, at int) { k.events = append(k.events, event{at, d}) }

func (k *key) halt(s Stop, d Divergence, at int) {
	k.note(d, at)
	k.stop = s
}

// emit takes one candidate output; a tool intent the baseline did not emit for the key (same
// tool, same arguments) is a new effect and stops the key after it.
func (k *key) emit(kind int64, b []byte) {
	if k.stop != "" {
		return
	}
	k.outputs = append(k.outputs, replay.Output{Kind: kind, Bytes: b})
	if kind != records.OutIntent {
		return
	}
	ti := &pb.ToolIntent{}
	if proto.Unmarshal(b, ti) != nil || ti.GetKind() != pb.ToolIntent_TOOL {
		return
	}
	k.tools[ti.GetToolName()] = true
	if !k.made(ti) {
		k.halt(StopNewEffect, Divergence{Kind: KindTool, Seq: ti.GetSeq(), Step: ti.GetStepIndex(),
			Detail: fmt.Sprintf("new call %s %s", ti.GetToolName(), ti.GetArgsJson())}, len(k.outputs)-1)
	}
}

// moved returns values with the baseline's answers (tool results, approval decisions) to a
// call the candidate made under another intent id readdressed to the candidate's intent: the
// same kind, tool and arguments, each baseline intent answering one candidate intent, in
// emission order. Nil when nothing is readdressed.
func (k *key) moved(values [][]byte) [][]byte {
	var base, cand []*pb.ToolIntent
	for _, b := range k.base[records.OutIntent] {
		if ti := (&pb.ToolIntent{}); proto.Unmarshal(b, ti) == nil {
			base = append(base, ti)
		}
	}
	for _, o := range k.outputs {
		if ti := (&pb.ToolIntent{}); o.Kind == records.OutIntent && proto.Unmarshal(o.Bytes, ti) == nil {
			cand = append(cand, ti)
		}
	}
	ids := func(tis []*pb.ToolIntent) map[string]bool {
		m := map[string]bool{}
		for _, ti := range tis {
			m[ti.GetIntentId()] = true
		}
		return m
	}
	baseIDs, candIDs := ids(base), ids(cand)
	to := map[string]*pb.ToolIntent{} // a baseline intent id -> the candidate's intent
	taken := map[string]bool{}
	for _, ci := range cand {
		if baseIDs[ci.GetIntentId()] || taken[ci.GetIntentId()] {
			continue
		}
		for _, bi := range base {
			if !candIDs[bi.GetIntentId()] && to[bi.GetIntentId()] == nil && bi.GetKind() == ci.GetKind() &&
				bi.GetToolName() == ci.GetToolName() && bi.GetArgsJson() == ci.GetArgsJson() {
				to[bi.GetIntentId()], taken[ci.GetIntentId()] = ci, true
				break
			}
		}
	}
	if len(to) == 0 {
		return nil
	}
	out, changed := slices.Clone(values), false
	for i, v := range values {
		env := drive.DecodeInput(k.entity, v).Env
		switch p := env.GetPayload().(type) {
		case *pb.AgentEnvelope_ToolResult:
			if ci := to[p.ToolResult.GetIntentId()]; ci != nil {
				p.ToolResult.IntentId, p.ToolResult.Seq = ci.GetIntentId(), ci.GetSeq()
				out[i], changed = drive.Marshal(env), true
			}
		case *pb.AgentEnvelope_Approval_:
			if ci := to[p.Approval.GetIntentId()]; ci != nil {
				p.Approval.IntentId = ci.GetIntentId()
				out[i], changed = drive.Marshal(env), true
			}
		}
	}
	if !changed {
		return nil
	}
	return out
}

// made reports whether the baseline emitted a tool intent of the key with ti's tool and
// arguments.
func (k *key) made(ti *pb.ToolIntent) bool {
	for _, b := range k.base[records.OutIntent] {
		bi := &pb.ToolIntent{}
		if proto.Unmarshal(b, bi) == nil && bi.GetKind() == ti.GetKind() && bi.GetToolName() == ti.GetToolName() && bi.GetArgsJson() == ti.GetArgsJson() {
			return true
		}
	}
	return false
}

// report is the key's record: its first divergence (the earlier of the first event and the
// first output compared differently) and its counts.
func (k *key) report() Key {
	r := Key{Entity: k.entity, Stop: k.stop, Answered: k.answered, Inlined: k.inlined, LiveCalls: k.liveCalls, LiveTokens: k.liveTokens}
	for _, o := range k.outputs {
		if kind, ok := records.KindOf(o.Kind); ok {
			if r.Produced == nil {
				r.Produced = map[string]int{}
			}
			r.Produced[kind.Name]++
		}
	}
	diff, differs := replay.Diff(k.outputs, k.base, compared)
	switch {
	case len(k.events) > 0 && (!differs || diff.Recorded || k.events[0].at <= diff.Index):
		r.Divergence = &k.events[0].d
	case differs && (!diff.Recorded || k.stop == ""):
		d := divergence(diff.Output, diff.Recorded)
		r.Divergence = &d
	}
	baseTools := calledTools(k.base[records.OutIntent], k.inline)
	for t := range k.tools {
		if !baseTools[t] {
			r.NewTools = append(r.NewTools, t)
		}
	}
	if k.stop == "" {
		for t := range baseTools {
			if !k.tools[t] {
				r.DroppedTools = append(r.DroppedTools, t)
			}
		}
	}
	slices.Sort(r.NewTools)
	slices.Sort(r.DroppedTools)
	return r
}

// calledTools are the tools of TOOL intents and the tools run inline.
func calledTools(intents [][]byte, inline map[string]bool) map[string]bool {
	tools := maps.Clone(inline)
	if tools == nil {
		tools = map[string]bool{}
	}
	for _, b := range intents {
		ti := &pb.ToolIntent{}
		if proto.Unmarshal(b, ti) == nil && ti.GetKind() == pb.ToolIntent_TOOL {
			tools[ti.GetToolName()] = true
		}
	}
	return tools
}

// compared is an output as a rehearsal compares it (replay.Diff): no traces, intents and the
// pending intents of snapshots without their signatures.
func compared(o replay.Output) (replay.Output, bool) {
	switch o.Kind {
	case records.OutTrace:
		return o, false
	case records.OutIntent:
		ti := &pb.ToolIntent{}
		if proto.Unmarshal(o.Bytes, ti) != nil {
			return o, true
		}
		unsign(ti)
		return replay.Output{Kind: o.Kind, Bytes: drive.Marshal(ti)}, true
	case records.OutSnapshot:
		// Only a snapshot's pending intents may be signed: one without any is compared as
		// it is, not decoded (the costliest record to decode, and one a key for each side).
		if _, _, pending, ok := field(o.Bytes, pendingField); ok && !pending {
			return o, true
		}
		s := &pb.StateSnapshot{}
		if proto.Unmarshal(o.Bytes, s) != nil {
			return o, true
		}
		for _, ti := range s.GetPending() {
			unsign(ti)
		}
		return replay.Output{Kind: o.Kind, Bytes: drive.Marshal(s)}, true
	}
	return o, true
}

func unsign(ti *pb.ToolIntent) {
	ti.SignatureScheme, ti.SigningKeyId, ti.Signature = pb.ToolIntent_SIGNATURE_SCHEME_UNSPECIFIED, "", nil
}

// divergence describes output o as a divergence of its kind.
func divergence(o replay.Output, missing bool) Divergence {
	d := Divergence{Missing: missing, Detail: replay.Describe(o)}
	k, _ := records.KindOf(o.Kind)
	m := k.New()
	if proto.Unmarshal(o.Bytes, m) != nil {
		d.Kind = KindState
		return d
	}
	switch v := m.(type) {
	case *pb.ToolIntent:
		d.Kind, d.Seq, d.Step = KindTool, v.GetSeq(), v.GetStepIndex()
		if v.GetKind() == pb.ToolIntent_APPROVAL {
			d.Kind = KindApproval
		}
	case *pb.FinalReply:
		d.Kind, d.Seq, d.Step = KindFinal, v.GetSeq(), v.GetStepIndex()
	case *pb.ActivationErrorRecord:
		d.Kind = KindDeadLetter
	case *pb.StateSnapshot:
		d.Kind, d.Seq = KindState, v.GetSeq()
	}
	return d
}
