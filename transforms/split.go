package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/records"
)

func init() {
	register.Function7x0(splitOutput)
}

func splitOutputs(s beam.Scope, tagged beam.PCollection) Outputs {
	return outputsOf(beam.ParDoN(s, splitOutput, tagged))
}

// outputsOf names the outputs of a DoFn that emits each kind to its own output, in
// splitOutput's order.
func outputsOf(outs []beam.PCollection) Outputs {
	return Outputs{Intents: outs[0], Traces: outs[1], Finals: outs[2], Snapshots: outs[3], DeadLetters: outs[4]}
}

// splitOutput emits a tagged output to the output of its kind.
func splitOutput(kind int64, b []byte, intents, traces, finals, snapshots, dead func([]byte)) {
	outputOf(kind, intents, traces, finals, snapshots, dead)(b)
}

// outputOf picks the output of kind among outputs given in Outputs' order (the order of
// records.Kinds); any other kind is a dead letter.
func outputOf[E any](kind int64, intents, traces, finals, snapshots, dead E) E {
	return records.Set[E]{intents, traces, finals, snapshots, dead}.Of(kind)
}
