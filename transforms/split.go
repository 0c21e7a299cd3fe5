package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
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
	switch kind {
	case outIntent:
		intents(b)
	case outTrace:
		traces(b)
	case outFinal:
		finals(b)
	case outSnapshot:
		snapshots(b)
	default:
		dead(b)
	}
}
