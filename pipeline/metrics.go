package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.DoFn2x0[context.Context, []byte](&countDeadLettersFn{})
	register.DoFn2x0[context.Context, []byte](&countEachFn{})
	register.DoFn6x0[context.Context, []byte, func(*[]byte) bool, func(*[]byte) bool, func(*[]byte) bool, func(*[]byte) bool](&countAllFn{})
}

// CountRecords counts the records of a pipeline's outputs in counters of the beamagents
// namespace: intents and intents.<KIND> (escalations included), final_replies, snapshots and
// snapshots.parked (the keys parked at the end of a bounded input), and
// dead_letters.<reason> (every dead letter of the pipeline, whichever step refused it;
// "undecodable" for a record that is not one).
//
// With bounded set, the outputs are bounded and in the global window (a pipeline over files),
// and all of them are counted once, after their last record, in a single bundle: the counters
// then equal the records written on every runner. Prism (v2.77) loses increments of a
// counter that several bundles of one step report before it has resolved the counter's short
// id (it keeps the last bundle's value only), so a count spread over the bundles of a
// parallel step can come out short there; a count one bundle reports cannot. Otherwise (an
// unbounded input) each record is counted as it passes, in the bundle that carries it.
func CountRecords(s beam.Scope, cols records.Set[beam.PCollection], bounded bool) {
	if bounded {
		s = s.Scope("CountRecords")
		side := func(out int64) beam.SideInput { return beam.SideInput{Input: cols.Of(out)} }
		beam.ParDo0(s, &countAllFn{}, beam.Impulse(s), side(records.OutIntent), side(records.OutFinal),
			side(records.OutSnapshot), side(records.OutDeadLetter))
		return
	}
	for _, out := range []int64{records.OutIntent, records.OutFinal, records.OutSnapshot} {
		k, _ := records.KindOf(out)
		beam.ParDo0(s.Scope("Count_"+k.Name), &countEachFn{Out: out}, cols.Of(out))
	}
	CountDeadLetters(s, cols.Of(records.OutDeadLetter))
}

// CountDeadLetters counts a PCollection<[]byte> of ActivationErrorRecords by reason, record by
// record, in the counters "dead_letters.<reason>" of the beamagents namespace.
func CountDeadLetters(s beam.Scope, dead beam.PCollection) {
	beam.ParDo0(s.Scope("CountDeadLetters"), &countDeadLettersFn{}, dead)
}

type countDeadLettersFn struct{}

func (f *countDeadLettersFn) ProcessElement(ctx context.Context, rec []byte) {
	countRecord(records.OutDeadLetter, rec, func(name string, n int64) {
		beam.NewCounter(transforms.MetricsNamespace, name).Inc(ctx, n)
	})
}

// countEachFn counts the records of output Out one by one.
type countEachFn struct {
	Out int64
}

func (f *countEachFn) ProcessElement(ctx context.Context, rec []byte) {
	countRecord(f.Out, rec, func(name string, n int64) {
		beam.NewCounter(transforms.MetricsNamespace, name).Inc(ctx, n)
	})
}

// countAllFn counts every record of the four counted outputs, whole, and adds each count to
// its counter once. The counters of the intents, final replies and snapshots are reported
// even when zero.
type countAllFn struct{}

func (f *countAllFn) ProcessElement(ctx context.Context, _ []byte, intents, finals, snapshots, dead func(*[]byte) bool) {
	counts := map[string]int64{"intents": 0, "final_replies": 0, "snapshots": 0}
	add := func(name string, n int64) { counts[name] += n }
	for out, next := range map[int64]func(*[]byte) bool{
		records.OutIntent: intents, records.OutFinal: finals, records.OutSnapshot: snapshots, records.OutDeadLetter: dead,
	} {
		var rec []byte
		for next(&rec) {
			countRecord(out, rec, add)
		}
	}
	for name, n := range counts {
		beam.NewCounter(transforms.MetricsNamespace, name).Inc(ctx, n)
	}
}

// countRecord adds what record rec of output out counts.
func countRecord(out int64, rec []byte, add func(name string, n int64)) {
	switch out {
	case records.OutIntent:
		add("intents", 1)
		ti := &pb.ToolIntent{}
		if proto.Unmarshal(rec, ti) == nil {
			add("intents."+ti.GetKind().String(), 1)
		}
	case records.OutFinal:
		add("final_replies", 1)
	case records.OutSnapshot:
		add("snapshots", 1)
		snap := &pb.StateSnapshot{}
		if proto.Unmarshal(rec, snap) == nil && snap.GetRequestId() == drive.ParkedRequestID {
			add("snapshots.parked", 1)
		}
	case records.OutDeadLetter:
		d := &pb.ActivationErrorRecord{}
		reason := "undecodable"
		if proto.Unmarshal(rec, d) == nil {
			reason = d.GetReason()
		}
		add("dead_letters."+reason, 1)
	}
}
