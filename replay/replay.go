package replay

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/beamagents/beamagents/ledger"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// ErrMiss is the model error of a request the caches cannot answer.
var ErrMiss = &model.Error{Code: model.CodeProvider, Detail: "replay: not in the recorded caches"}

// Miss is one request the caches could not answer.
type Miss struct {
	Entity     []byte
	Seq        int64
	Step       uint32
	CacheKey   string
	DigestOnly bool   // the entry exists but kept only the response's digest
	Inline     string // the inline tool whose run was not recorded; empty for a model request
}

func (m Miss) String() string {
	if m.Inline != "" {
		return fmt.Sprintf("inline tool %s not recorded at seq %d step %d (key %s)", m.Inline, m.Seq, m.Step, m.CacheKey)
	}
	why := "no cache entry"
	if m.DigestOnly {
		why = "the cache entry kept only the response's digest"
	}
	return fmt.Sprintf("cache miss at seq %d step %d (%s, key %s)", m.Seq, m.Step, why, m.CacheKey)
}

// usage is what the recorded run's LLM_CALL trace said of a provider's answer.
type usage struct {
	in, cached, out int64
	model, finish   string
	answeredBy      string
	passed          []model.Pass
}

// Model answers requests from recorded replay caches and never calls a provider. It is safe
// for concurrent use.
type Model struct {
	responses map[string][]byte
	digests   map[string]bool
	usage     map[string]usage // by entity, seq, step
	modelIDs  map[string]bool  // the model ids the recorded run asked

	mu       sync.Mutex
	answered int // model requests
	inlined  int // inline tool runs
	misses   []Miss
}

// NewModel collects the cache entries of snaps and, optionally, the usage of the recorded
// LLM_CALL traces.
func NewModel(snaps []*pb.StateSnapshot, traces []*pb.TraceEvent) *Model {
	m := &Model{responses: map[string][]byte{}, digests: map[string]bool{}, usage: map[string]usage{}, modelIDs: map[string]bool{}}
	for _, s := range snaps {
		for _, e := range s.GetLlmCache().GetEntries() {
			if e.GetDigestOnly() {
				m.digests[e.GetCacheKey()] = true
				continue
			}
			m.responses[e.GetCacheKey()] = e.GetResponse()
		}
	}
	for _, t := range traces {
		if t.GetEventType() != pb.TraceEvent_LLM_CALL {
			continue
		}
		if id := t.GetAttributes()[tracing.AttrRequestModel]; id != "" {
			m.modelIDs[id] = true
		}
		if t.GetAttributes()[tracing.AttrCacheHit] == "true" {
			continue
		}
		a := t.GetAttributes()
		in, _ := strconv.ParseInt(a[tracing.AttrInputTokens], 10, 64)
		cached, _ := strconv.ParseInt(a[tracing.AttrCacheReadInputTokens], 10, 64)
		out, _ := strconv.ParseInt(a[tracing.AttrOutputTokens], 10, 64)
		m.usage[stepKey(t.GetEntityKey(), t.GetSeq(), t.GetStepIndex())] = usage{in: in, cached: cached, out: out,
			model: a[tracing.AttrResponseModel], finish: a[tracing.AttrResponseFinishReasons],
			answeredBy: a[tracing.AttrAnsweredBy], passed: model.ParsePasses(a[tracing.AttrModelsPassed])}
	}
	return m
}

func stepKey(entity []byte, seq int64, step uint32) string {
	return fmt.Sprintf("%x/%d/%d", entity, seq, step)
}

// Generate answers from the caches.
func (m *Model) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	key := model.CacheKey(req)
	m.mu.Lock()
	defer m.mu.Unlock()
	text, ok := m.responses[key]
	if !ok {
		m.misses = append(m.misses, Miss{Entity: req.EntityKey, Seq: req.Seq, Step: req.Step, CacheKey: key, DigestOnly: m.digests[key]})
		return nil, ErrMiss
	}
	m.answered++
	u := m.usage[stepKey(req.EntityKey, req.Seq, req.Step)]
	// A request with native tools was recorded as its canonical turn: text and tool calls.
	resp := model.CachedResponse(req, slices.Clone(text))
	resp.Model, resp.FinishReason, resp.Usage = u.model, u.finish, model.Usage{InputTokens: u.in, CachedInputTokens: u.cached, OutputTokens: u.out}
	resp.AnsweredBy, resp.Passed = u.answeredBy, u.passed
	return resp, nil
}

// Inline answers an inline tool run from the caches (host.Deps.Recorded): a replay never
// runs an inline tool again.
func (m *Model) Inline(run host.InlineRun) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.responses[run.CacheKey]
	if !ok {
		m.misses = append(m.misses, Miss{Entity: run.Entity, Seq: run.Seq, Step: run.Step, CacheKey: run.CacheKey,
			DigestOnly: m.digests[run.CacheKey], Inline: run.Tool})
		return nil, false
	}
	m.inlined++
	return slices.Clone(rec), true
}

// ModelID is the one model id the recorded run's LLM_CALL traces asked, or "" when they name
// none or several.
func (m *Model) ModelID() string {
	if len(m.modelIDs) != 1 {
		return ""
	}
	for id := range m.modelIDs {
		return id
	}
	return ""
}

// Inlined counts the inline tool runs answered from the caches.
func (m *Model) Inlined() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inlined
}

// Answered counts the model requests answered from the caches.
func (m *Model) Answered() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.answered
}

// Misses lists the model requests and inline tool runs the caches could not answer, in order.
func (m *Model) Misses() []Miss {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.misses)
}

// Output is one output record: its kind (records.OutIntent …) and deterministic bytes.
type Output struct {
	Kind  int64
	Bytes []byte
}

// Key is one key's replay.
type Key struct {
	Entity  []byte
	Outputs []Output // in emission order
	// Divergence describes the key's first divergence from the recorded outputs; empty when
	// it has none.
	Divergence string
}

// Input is a key's input values in arrival order (drive.Driver.Run).
type Input struct {
	Entity []byte
	Values [][]byte
}

// Run replays each key with a, whose model is replaced by m, and compares its outputs with
// recorded (every recorded output record by kind, as the file sinks wrote them). Every model
// request and every inline tool run is answered from m's caches, never by a provider or the
// tool. Requests name the model id the recorded run asked (its LLM_CALL traces), or a's when
// the traces name none or several, so a run launched with a model of its own choosing
// (`run --model openai --model_name M`) replays under the cache keys it wrote.
func Run(ctx context.Context, a *agent.Agent, deps host.Deps, m *Model, inputs []Input, recorded map[int64][][]byte) ([]Key, error) {
	return RunWith(ctx, a, deps, m, inputs, recorded, Ending{})
}

// Ending is how the recorded run treated the keys still waiting at the end of its bounded
// input: with Park they were parked (drive.Core.Park), the input ending at EndMs (InputEnd);
// else their deadlines fired to the end. Prices is the price table it was launched with,
// which a tenant cost budget's grants were reserved at (agent.Agent.Admission).
type Ending struct {
	Park   bool
	EndMs  int64
	Prices ledger.Table
}

// InputEnd is where a bounded run of inputs ends, as pipeline.InputEnd reads it: the latest
// event time of their envelopes and of the snapshots they restore.
func InputEnd(inputs []Input) int64 {
	end := int64(math.MinInt64)
	for _, in := range inputs {
		for _, v := range in.Values {
			switch x := drive.DecodeInput(in.Entity, v); {
			case x.Env != nil:
				end = max(end, x.Env.GetEventTimeMs())
			case x.Snapshot != nil:
				end = max(end, x.Snapshot.GetSnapshotAtMs())
			}
		}
	}
	return end
}

// RunWith is Run for a recorded run that ended as end says.
func RunWith(ctx context.Context, a *agent.Agent, deps host.Deps, m *Model, inputs []Input, recorded map[int64][][]byte, end Ending) ([]Key, error) {
	answered, err := a.WithModel(m, m.ModelID(), false)
	if err != nil {
		return nil, err
	}
	deps.Recorded = m.Inline
	d := &drive.Driver{Core: drive.Core{Agent: answered, Deps: deps, OrderResolutionMs: 1, Park: end.Park, EndMs: end.EndMs}}
	rec := ByEntity(recorded)
	if inputs, err = admitted(a, end.Prices, inputs); err != nil {
		return nil, err
	}
	var keys []Key
	for _, in := range Sharded(a.Shards(), inputs) {
		before := len(m.Misses())
		k := Key{Entity: in.Entity}
		d.Run(ctx, in.Entity, in.Values, func(kind int64, b []byte) { k.Outputs = append(k.Outputs, Output{kind, b}) })
		if misses := m.Misses()[before:]; len(misses) > 0 {
			k.Divergence = misses[0].String()
		} else if recorded != nil {
			k.Divergence = compare(k.Outputs, rec[string(in.Entity)])
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// compare finds the first output of got not in want (a multiset), else the first of want
// left over.
func compare(got []Output, want map[int64][][]byte) string {
	d, ok := Diff(got, want, nil)
	switch {
	case !ok:
		return ""
	case d.Recorded:
		return "recorded output not produced: " + Describe(d.Output)
	}
	return "first different output: " + Describe(d.Output)
}

// Difference is the first difference of a key's outputs from the recorded ones.
type Difference struct {
	Output Output // as compared (after the caller's normalization)
	// Index is Output's position in the outputs compared; -1 when Recorded.
	Index int
	// Recorded says Output is a recorded output left over, which the run did not produce.
	Recorded bool
}

// Diff finds the first output of got not in want (a multiset), else the first of want left
// over (in the order of records.Kinds, then recorded order). norm, when not nil, maps every
// output of both sides to the form compared, or drops it from the comparison (false): a
// rehearsal compares intents without their signatures, and no traces.
func Diff(got []Output, want map[int64][][]byte, norm func(Output) (Output, bool)) (Difference, bool) {
	if norm == nil {
		norm = func(o Output) (Output, bool) { return o, true }
	}
	left := map[int64]map[string]int{}
	var order []Output
	for _, k := range records.Kinds() {
		left[k.Out] = map[string]int{}
		for _, r := range want[k.Out] {
			if o, ok := norm(Output{k.Out, r}); ok {
				left[o.Kind][string(o.Bytes)]++
				order = append(order, o)
			}
		}
	}
	for i, o := range got {
		o, ok := norm(o)
		if !ok {
			continue
		}
		if left[o.Kind][string(o.Bytes)] == 0 {
			return Difference{Output: o, Index: i}, true
		}
		left[o.Kind][string(o.Bytes)]--
	}
	for _, o := range order {
		if left[o.Kind][string(o.Bytes)] > 0 {
			return Difference{Output: o, Index: -1, Recorded: true}, true
		}
	}
	return Difference{}, false
}

// Describe names an output record briefly.
func Describe(o Output) string {
	m := newMessage(o.Kind)
	if err := proto.Unmarshal(o.Bytes, m); err != nil {
		return fmt.Sprintf("%s (undecodable)", kindName(o.Kind))
	}
	switch v := m.(type) {
	case *pb.ToolIntent:
		return fmt.Sprintf("intent %s (%s, seq %d step %d attempt %d)", v.GetIntentId(), v.GetToolName(), v.GetSeq(), v.GetStepIndex(), v.GetAttempt())
	case *pb.TraceEvent:
		return fmt.Sprintf("trace %s (seq %d step %d at %d)", v.GetEventType(), v.GetSeq(), v.GetStepIndex(), v.GetStartMs())
	case *pb.FinalReply:
		return fmt.Sprintf("final reply (seq %d step %d, case %s): %.120q", v.GetSeq(), v.GetStepIndex(), v.GetCaseId(), v.GetMessage())
	case *pb.StateSnapshot:
		return fmt.Sprintf("snapshot %q (seq %d at %d)", v.GetRequestId(), v.GetSeq(), v.GetSnapshotAtMs())
	case *pb.ActivationErrorRecord:
		return fmt.Sprintf("dead letter %s at %d: %s", v.GetReason(), v.GetEventTimeMs(), v.GetDetail())
	}
	return kindName(o.Kind)
}

func newMessage(kind int64) proto.Message {
	k, ok := records.KindOf(kind)
	if !ok {
		k, _ = records.KindOf(records.OutDeadLetter)
	}
	return k.New()
}

func kindName(kind int64) string {
	if k, ok := records.KindOf(kind); ok {
		return k.Noun
	}
	return "?"
}

// ByEntity groups recorded outputs by their entity key; a record that does not decode is left
// out.
func ByEntity(recorded map[int64][][]byte) map[string]map[int64][][]byte {
	out := map[string]map[int64][][]byte{}
	for kind, recs := range recorded {
		for _, r := range recs {
			m := newMessage(kind)
			if proto.Unmarshal(r, m) != nil {
				continue
			}
			e := string(m.ProtoReflect().Get(m.ProtoReflect().Descriptor().Fields().ByName("entity_key")).Bytes())
			if out[e] == nil {
				out[e] = map[int64][][]byte{}
			}
			out[e][kind] = append(out[e][kind], r)
		}
	}
	return out
}

// admitted is inputs as the recorded run's keyed step saw them: their external events
// stamped by the agent's tenant budget admission (drive.Admit), when it declares one.
func admitted(a *agent.Agent, prices ledger.Table, inputs []Input) ([]Input, error) {
	if adm, err := a.Admission(prices); err != nil || adm == nil {
		return inputs, err
	}
	keys, values := make([][]byte, len(inputs)), make([][][]byte, len(inputs))
	for i, in := range inputs {
		keys[i], values[i] = in.Entity, in.Values
	}
	values, err := drive.Admit(a, prices, keys, values)
	if err != nil {
		return nil, err
	}
	out := make([]Input, len(inputs))
	for i, in := range inputs {
		out[i] = Input{Entity: in.Entity, Values: values[i]}
	}
	return out, nil
}
