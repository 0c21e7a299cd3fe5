package pubsub

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/encoding/protowire"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func init() {
	register.DoFn1x0[[]byte](&tallyFn{})
}

// Tally counts RunAgent's outputs into the Run named by run (Options.Run) for a live status:
// activations (ACTIVATION_START trace events), intents and dead letters. It is a no-op on
// workers outside the launching process.
func Tally(s beam.Scope, run string, intents, traces, deadLetters beam.PCollection) {
	s = s.Scope("Tally")
	beam.ParDo0(s, &tallyFn{Run: run, What: "intents"}, intents)
	beam.ParDo0(s, &tallyFn{Run: run, What: "activations"}, traces)
	beam.ParDo0(s, &tallyFn{Run: run, What: "dead_letters"}, deadLetters)
}

type tallyFn struct{ Run, What string }

func (f *tallyFn) ProcessElement(b []byte) {
	r := lookupRun(f.Run)
	if r == nil {
		return
	}
	switch f.What {
	case "intents":
		r.intents.Add(1)
	case "dead_letters":
		r.deadLetters.Add(1)
	case "activations":
		if traceType(b) == pb.TraceEvent_ACTIVATION_START {
			r.activations.Add(1)
		}
	}
}

// traceType reads a serialized TraceEvent's event_type (field 7) without decoding the rest.
func traceType(b []byte) pb.TraceEvent_EventType {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0
		}
		b = b[n:]
		if num == 7 && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(b)
			return pb.TraceEvent_EventType(v)
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return 0
		}
		b = b[n:]
	}
	return 0
}
