package pubsub

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/pubsubio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

func init() {
	register.Function1x2(marshalMessage)
}

// Source is what Read returns.
type Source struct {
	// Keyed is PCollection<KV<[]byte, []byte>>: entity key → deterministic binary
	// AgentEnvelope, second deliveries removed; RunAgent's input.
	Keyed beam.PCollection
	// DeadLetters is PCollection<[]byte> of ActivationErrorRecords of rejected messages.
	DeadLetters beam.PCollection
	// Rejected is PCollection<[]byte> of the rejected messages themselves (serialized
	// PubsubMessages with the reason attributes), for PublishRejected.
	Rejected beam.PCollection
	// Traces is PCollection<[]byte> of the TraceEvents of dropped duplicates.
	Traces beam.PCollection
}

// Read reads envelopes from subscription (projects/P/subscriptions/S): an unbounded source
// (see the package documentation), then decoding, then the dedup step keyed by entity key.
// With o.Native it reads with Beam's pubsubio, which only Dataflow runs.
func Read(s beam.Scope, subscription string, o Options) (Source, error) {
	n, err := ParseSubscription(subscription)
	if err != nil {
		return Source{}, err
	}
	s = s.Scope("PubSubRead")
	var raw beam.PCollection
	if o.Native {
		msgs := pubsubio.Read(s, n.Project, pubsubio.ReadOptions{
			Subscription: n.ID, WithAttributes: true, TimestampAttribute: o.EventTimeAttribute,
		})
		raw = beam.ParDo(s, marshalMessage, msgs)
	} else {
		raw = beam.ParDo(s.Scope("Pull"), newPullFn(o), beam.Create(s, subscription))
	}
	keyed, rejected, dead := beam.ParDo3(s.Scope("Decode"), &decodeFn{EventTimeAttribute: o.EventTimeAttribute, EnvelopeIDs: o.EnvelopeIDAttribute}, raw)
	deduped, traces := beam.ParDo2(s.Scope(DedupScope), newDedupFn(o), keyed)
	return Source{Keyed: deduped, DeadLetters: dead, Rejected: rejected, Traces: traces}, nil
}

func marshalMessage(m *pubsubpb.PubsubMessage) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}
