package transforms

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/rehearse"
)

func init() {
	register.DoFn3x3[context.Context, beam.EventTime, []byte, []byte, []byte, error](&shadowItemFn{})
	register.DoFn7x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []byte, func(beam.EventTime, []byte), error](&compareShadowFn{})
	register.Emitter2[beam.EventTime, []byte]()
}

// Stable names of the shadow's steps: the --update contract of a pipeline with a shadow.
const (
	ShadowScope        = "Shadow"              // scope of the shadow's RunAgent (Shadow/RunAgent)
	ShadowCompareScope = "ShadowCompare"       // scope of the comparing step
	ShadowCompareID    = "shadow_compare.v1"   // its state cell (ShadowCompareState)
	ShadowTimerID      = "shadow_compare_t.v1" // its one timer family
	ShadowPool         = "shadow"              // the shadow's model limits (hosted.Options.Pool)
	// DefaultShadowGraceMs is how long after a firing's event time the comparing step waits
	// for both sides' outputs of it.
	DefaultShadowGraceMs = int64(10_000)
)

// ShadowOptions are what a shadow changes in production's Options: the candidate agent and
// its configuration, its own model concurrency and token rate (0 keeps production's
// settings, in limits of its own all the same).
type ShadowOptions struct {
	Agent            string
	Config           []byte
	ModelConcurrency int
	TokensPerMinute  int64
}

// Shadowed returns production's Options o as the shadow's, to run in the scope ShadowScope
// beside production over the same keyed envelopes (a stateful step and state of its own):
// the candidate agent, the shadow
// mark (Options.Shadow), the model's limits kept apart from production's (ShadowPool) with
// the shadow's own concurrency and token rate, and no state capture.
func (so ShadowOptions) Shadowed(o Options) Options {
	o.Agent, o.Config, o.Shadow, o.Capture = so.Agent, so.Config, true, ""
	o.Model.Pool = ShadowPool
	if so.ModelConcurrency > 0 {
		o.ModelConcurrency, o.Model.Limits.Concurrency = so.ModelConcurrency, so.ModelConcurrency
	}
	if so.TokensPerMinute > 0 {
		o.Model.Limits.TPM = so.TokensPerMinute
	}
	return o
}

// CompareShadow compares, per key, production's outputs with the shadow's (intents without
// their signatures, final replies, dead letters; see rehearse.Settle) in a stateful step
// keyed by entity key, once the watermark passes each firing's event time by graceMs (0:
// DefaultShadowGraceMs). It returns one ShadowComparison per firing compared
// (PCollection<[]byte>).
func CompareShadow(s beam.Scope, prod, shadow Outputs, graceMs int64) beam.PCollection {
	s = s.Scope(ShadowCompareScope)
	if graceMs <= 0 {
		graceMs = DefaultShadowGraceMs
	}
	var items []beam.PCollection
	for _, side := range []struct {
		name   string
		shadow bool
		o      Outputs
	}{{"Production", false, prod}, {"Shadow", true, shadow}} {
		cols := records.Set[beam.PCollection]{side.o.Intents, side.o.Traces, side.o.Finals, side.o.Snapshots, side.o.DeadLetters}
		for _, out := range []int64{records.OutIntent, records.OutFinal, records.OutDeadLetter} {
			k, _ := records.KindOf(out)
			ks := s.Scope(side.name + "_" + k.Name)
			items = append(items, beam.ParDo(ks, &shadowItemFn{Shadow: side.shadow, Kind: out}, cols.Of(out)))
		}
	}
	return beam.ParDo(s, &compareShadowFn{GraceMs: graceMs,
		State: state.MakeValueState[[]byte](ShadowCompareID), Timer: timers.InEventTime(ShadowTimerID)}, beam.Flatten(s, items...))
}

// shadowItemFn keys one side's output of one kind by its entity key as a ShadowItem.
type shadowItemFn struct {
	Shadow bool
	Kind   int64
}

func (f *shadowItemFn) ProcessElement(_ context.Context, ts beam.EventTime, b []byte) ([]byte, []byte, error) {
	it, ok := rehearse.NewShadowItem(f.Shadow, f.Kind, b, mtime.Time(ts).Milliseconds())
	if !ok {
		return nil, nil, fmt.Errorf("shadow comparison: an output of kind %d does not decode", f.Kind)
	}
	key, err := entityOf(f.Kind, b)
	if err != nil {
		return nil, nil, err
	}
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(it)
	return key, v, err
}

// entityOf is the entity key of an output of kind.
func entityOf(kind int64, b []byte) ([]byte, error) {
	k, _ := records.KindOf(kind)
	m := k.New()
	if err := proto.Unmarshal(b, m); err != nil {
		return nil, err
	}
	fd := m.ProtoReflect().Descriptor().Fields().ByName("entity_key")
	return m.ProtoReflect().Get(fd).Bytes(), nil
}

// endMs is the end of the global window: no timer may be set past it.
var endMs = mtime.EndOfGlobalWindowTime.Milliseconds()

// compareShadowFn keeps a key's outputs of both sides (ShadowCompareState) until the
// watermark settles them, then emits their comparisons.
type compareShadowFn struct {
	GraceMs int64
	State   state.Value[[]byte]
	Timer   timers.EventTime
}

func (f *compareShadowFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, item []byte, emit func(beam.EventTime, []byte)) error {
	it := &pb.ShadowItem{}
	if err := proto.Unmarshal(item, it); err != nil {
		return fmt.Errorf("shadow comparison: item: %w", err)
	}
	st, err := f.read(sp)
	if err != nil {
		return err
	}
	st.Items = append(st.Items, it)
	return f.write(sp, tp, st)
}

func (f *compareShadowFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, _ timers.Context, emit func(beam.EventTime, []byte)) error {
	st, err := f.read(sp)
	if err != nil {
		return err
	}
	st.WakeMs = 0
	now := mtime.Time(ts).Milliseconds()
	if now >= endMs {
		// The end of the global window (a bounded input's end, or the batch path's outputs,
		// stamped there): everything is settled.
		now = math.MaxInt64
	}
	for _, c := range rehearse.Settle(st, now, f.GraceMs) {
		c.EntityKey = key
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(c)
		if err != nil {
			return err
		}
		emit(ts, b)
	}
	return f.write(sp, tp, st)
}

func (f *compareShadowFn) read(sp state.Provider) (*pb.ShadowCompareState, error) {
	b, _, err := f.State.Read(sp)
	if err != nil {
		return nil, err
	}
	st := &pb.ShadowCompareState{}
	if err := proto.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("shadow comparison: state: %w", err)
	}
	return st, nil
}

// write commits st and sets the key's timer to its earliest settling, when that moved.
func (f *compareShadowFn) write(sp state.Provider, tp timers.Provider, st *pb.ShadowCompareState) error {
	if w := min(rehearse.Wake(st, f.GraceMs), endMs); w != 0 && w != st.WakeMs {
		st.WakeMs = w
		f.Timer.Set(tp, mtime.FromMilliseconds(w).ToTime())
	}
	if len(st.Items) == 0 && len(st.Diverged) == 0 {
		return f.State.Clear(sp)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(st)
	if err != nil {
		return err
	}
	return f.State.Write(sp, b)
}
