package pipeline

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.DoFn2x0[context.Context, []byte](&countDeadLettersFn{})
}

// CountDeadLetters counts a PCollection<[]byte> of ActivationErrorRecords by reason, in the
// counters "dead_letters.<reason>" of the beamagents namespace: every dead letter of a
// pipeline, whichever step refused it.
func CountDeadLetters(s beam.Scope, dead beam.PCollection) {
	beam.ParDo0(s.Scope("CountDeadLetters"), &countDeadLettersFn{}, dead)
}

type countDeadLettersFn struct{}

func (f *countDeadLettersFn) ProcessElement(ctx context.Context, rec []byte) {
	d := &pb.ActivationErrorRecord{}
	reason := "undecodable"
	if proto.Unmarshal(rec, d) == nil {
		reason = d.GetReason()
	}
	beam.NewCounter(transforms.MetricsNamespace, "dead_letters."+reason).Inc(ctx, 1)
}
