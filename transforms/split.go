package transforms

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.Function7x0(splitOutput)
}

func splitOutputs(s beam.Scope, tagged beam.PCollection) Outputs {
	outs := beam.ParDoN(s, splitOutput, tagged)
	return Outputs{Intents: outs[0], Traces: outs[1], Finals: outs[2], Snapshots: outs[3], DeadLetters: outs[4]}
}

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
