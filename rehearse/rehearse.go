package rehearse

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/replay"
	"github.com/beamagents/beamagents/tracing"
)

// Options configure a rehearsal.
type Options struct {
	// Live answers the requests the baseline did not make, within LiveCalls calls and, when
	// LiveTokens > 0, while fewer than LiveTokens tokens (input and output) were spent (the
	// call that crosses it counts in full). Nil, or LiveCalls 0, makes no live call.
	Live       model.Model
	LiveCalls  int
	LiveTokens int64
	// ModelID is the model id the candidate's requests name (part of every cache key): the
	// live model's, when the change under test is the model. Empty names the baseline's, as
	// replay does (replay.Model.ModelID), or the candidate's own when the baseline names none
	// or several.
	ModelID string
	// Ending is how the baseline's bounded run ended (parked keys or failed closed).
	Ending replay.Ending
	// Refused are the dead letters of input records refused before they reached the agent
	// (undecodable envelopes): the baseline has them too, and they belong to their keys.
	Refused [][]byte
}

// Run rehearses candidate a over inputs (each key's input values, restores first, as replay
// takes them) against baseline, the baseline's output records by kind as `run` wrote them:
// its snapshots' replay caches answer the model, its traces give the recorded usage, and
// its outputs are what the candidate is compared with. Every restore among inputs is first
// checked with CheckState. The context bounds the live calls.
func Run(ctx context.Context, a *agent.Agent, inputs []replay.Input, baseline map[int64][][]byte, o Options) (*Report, error) {
	for _, in := range inputs {
		for _, v := range in.Values {
			if snap := drive.DecodeInput(in.Entity, v).Snapshot; snap != nil {
				if err := CheckState(ctx, a, snap); err != nil {
					return nil, err
				}
			}
		}
	}
	rec, err := recorded(baseline)
	if err != nil {
		return nil, err
	}
	g := &gate{rec: rec, o: o}
	id := o.ModelID
	if id == "" {
		id = rec.ModelID()
	}
	candidate, err := a.WithModel(g, id, false)
	if err != nil {
		return nil, err
	}
	// Unsigned intents: a rehearsal holds no production keyring, and its intents go nowhere.
	// Results and approvals are admitted unchecked: the baseline's run verified them.
	deps := agent.Deps{AllowUnsigned: true, Recorded: g.inline}
	d := &drive.Driver{Core: drive.Core{Agent: candidate, Deps: deps, OrderResolutionMs: 1, Park: o.Ending.Park, EndMs: o.Ending.EndMs}}
	base := replay.ByEntity(baseline)
	refused := replay.ByEntity(map[int64][][]byte{records.OutDeadLetter: o.Refused})
	r := &Report{}
	for _, in := range inputs {
		r.Keys = append(r.Keys, g.key(ctx, d, in, base[string(in.Entity)], refused[string(in.Entity)][records.OutDeadLetter]))
	}
	r.Summary = summarize(r.Keys)
	return r, nil
}

// recorded is the replay model over the baseline's snapshots and traces.
func recorded(baseline map[int64][][]byte) (*replay.Model, error) {
	var snaps []*pb.StateSnapshot
	for i, b := range baseline[records.OutSnapshot] {
		s := &pb.StateSnapshot{}
		if err := proto.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("baseline snapshot %d: %w", i+1, err)
		}
		snaps = append(snaps, s)
	}
	var traces []*pb.TraceEvent
	for i, b := range baseline[records.OutTrace] {
		t := &pb.TraceEvent{}
		if err := proto.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("baseline trace %d: %w", i+1, err)
		}
		traces = append(traces, t)
	}
	return replay.NewModel(snaps, traces), nil
}

// maxPasses bounds the runs of one key whose tool calls moved (key.moved).
const maxPasses = 8

// key rehearses one key. A tool call or approval the candidate makes at another step than the
// baseline (another intent id) is answered by the baseline's answer to the same call: the key
// runs again with the answers addressed to the candidate's intents, until no call moves. A
// rerun asks the live model nothing new (g.memo) and spends what its first run spent.
func (g *gate) key(ctx context.Context, d *drive.Driver, in replay.Input, base map[int64][][]byte, refused [][]byte) Key {
	values := in.Values
	calls, tokens := g.calls, g.tokens
	for pass := 1; ; pass++ {
		k := newKey(in.Entity, base)
		for _, dl := range refused {
			k.emit(records.OutDeadLetter, dl)
		}
		g.start(k, calls, tokens)
		d.Run(ctx, in.Entity, values, k.emit)
		moved := k.moved(values)
		if moved == nil || pass == maxPasses {
			return k.report()
		}
		values = moved
	}
}

// gate is the candidate's model and inline-tool recorder: the baseline first, then the live
// model within the budget, else the key stops. Keys run one after another (start).
type gate struct {
	rec *replay.Model
	o   Options

	mu     sync.Mutex
	k      *key
	calls  int
	tokens int64
	memo   map[string]answer // live answers by cache key, for a key's reruns
}

// answer is one live call's outcome.
type answer struct {
	resp *model.Response
	err  error
}

// start starts a run of key k with the live calls and tokens spent before it.
func (g *gate) start(k *key, calls int, tokens int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.k, g.calls, g.tokens = k, calls, tokens
}

// Generate answers req from the baseline, else live within the budget, else stops the key.
func (g *gate) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.k
	if k.stop != "" {
		return nil, errStopped
	}
	resp, err := g.rec.Generate(ctx, req)
	if err == nil {
		k.answered++
		return resp, nil
	}
	misses := g.rec.Misses()
	d := Divergence{Kind: KindModelRequest, Seq: req.Seq, Step: req.Step, Detail: misses[len(misses)-1].String()}
	if g.o.Live == nil || g.calls >= g.o.LiveCalls || g.o.LiveTokens > 0 && g.tokens >= g.o.LiveTokens {
		k.halt(StopUnanswered, d, len(k.outputs))
		return nil, ErrUnanswered
	}
	k.note(d, len(k.outputs))
	g.calls++
	k.liveCalls++
	key := model.CacheKey(req)
	a, ok := g.memo[key]
	if !ok {
		a.resp, a.err = g.o.Live.Generate(ctx, req)
		if g.memo == nil {
			g.memo = map[string]answer{}
		}
		g.memo[key] = a
	}
	resp, err = a.resp, a.err
	if resp != nil {
		cp := *resp
		resp = &cp
		n := resp.Usage.InputTokens + resp.Usage.OutputTokens
		g.tokens += n
		k.liveTokens += n
	}
	return resp, err
}

// inline answers an inline tool run from the baseline's record; a run it did not make is a
// new effect: never run, the key stops.
func (g *gate) inline(run agent.InlineRun) ([]byte, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := g.k
	if k.stop != "" {
		return nil, false
	}
	k.tools[run.Tool] = true
	if b, ok := g.rec.Inline(run); ok {
		k.inlined++
		return b, true
	}
	misses := g.rec.Misses()
	k.halt(StopNewEffect, Divergence{Kind: KindTool, Seq: run.Seq, Step: run.Step, Detail: misses[len(misses)-1].String()}, len(k.outputs))
	return nil, false
}

// key is one key's rehearsal as it runs.
type key struct {
	entity  []byte
	base    map[int64][][]byte // the baseline's outputs of the key
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

func newKey(entity []byte, base map[int64][][]byte) *key {
	return &key{entity: entity, base: base, tools: map[string]bool{}}
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
	baseTools := calledTools(k.base[records.OutIntent], k.base[records.OutTrace])
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

// calledTools are the tools of TOOL intents and of inline TOOL_CALL traces.
func calledTools(intents, traces [][]byte) map[string]bool {
	tools := map[string]bool{}
	for _, b := range intents {
		ti := &pb.ToolIntent{}
		if proto.Unmarshal(b, ti) == nil && ti.GetKind() == pb.ToolIntent_TOOL {
			tools[ti.GetToolName()] = true
		}
	}
	for _, b := range traces {
		t := &pb.TraceEvent{}
		if proto.Unmarshal(b, t) == nil && t.GetEventType() == pb.TraceEvent_TOOL_CALL && t.GetAttributes()[tracing.AttrInline] == "true" {
			tools[t.GetAttributes()[tracing.AttrToolName]] = true
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

// summarize totals the keys' records.
func summarize(keys []Key) Summary {
	s := Summary{Keys: len(keys), ByKind: map[Kind]int{}, Stopped: map[Stop]int{}}
	newTools, dropped := map[string]bool{}, map[string]bool{}
	for _, k := range keys {
		if k.Divergence != nil {
			s.Divergent++
			s.ByKind[k.Divergence.Kind]++
		}
		if k.Stop != "" {
			s.Stopped[k.Stop]++
		}
		s.Answered += k.Answered
		s.Inlined += k.Inlined
		s.LiveCalls += k.LiveCalls
		s.LiveTokens += k.LiveTokens
		for _, t := range k.NewTools {
			newTools[t] = true
		}
		for _, t := range k.DroppedTools {
			dropped[t] = true
		}
	}
	s.NewTools = slices.Sorted(maps.Keys(newTools))
	s.DroppedTools = slices.Sorted(maps.Keys(dropped))
	return s
}
