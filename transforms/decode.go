package transforms

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent/drive"
	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register.DoFn4x0[context.Context, []byte, func([]byte, []byte), func([]byte)](&decodeFn{})
	register.Emitter2[[]byte, []byte]()
	register.Emitter1[[]byte]()
}

// Format names how envelope records are encoded (records.Format).
type Format = records.Format

// Record formats.
const (
	// Binary: each record is one binary-serialized AgentEnvelope.
	Binary = records.Binary
	// JSON: each record is one AgentEnvelope in protojson (one line of a JSON Lines file).
	JSON = records.JSON
)

// DecodeEnvelopes turns raw records (PCollection<[]byte>) into envelopes keyed by entity key
// (PCollection<KV<[]byte, []byte>>, the value a deterministic binary AgentEnvelope) and dead
// letters (PCollection<[]byte>, binary ActivationErrorRecords with reason envelope_invalid).
// Nothing is dropped: every record ends in exactly one of the two outputs.
func DecodeEnvelopes(s beam.Scope, format Format, records beam.PCollection) (keyed, dead beam.PCollection) {
	s = s.Scope("DecodeEnvelopes")
	return beam.ParDo2(s, &decodeFn{Format: format}, records)
}

type decodeFn struct {
	Format Format

	decoded, invalid beam.Counter
}

func (f *decodeFn) Setup() {
	f.decoded = beam.NewCounter("beamagents", "envelopes_decoded")
	f.invalid = beam.NewCounter("beamagents", "envelopes_invalid")
}

func (f *decodeFn) ProcessElement(ctx context.Context, rec []byte, keyed func([]byte, []byte), dead func([]byte)) {
	progress.Read(1)
	env, canon, err := drive.DecodeEnvelope(f.Format, rec)
	if err != nil {
		f.invalid.Inc(ctx, 1)
		progress.DeadLetters(1)
		dead(drive.Marshal(drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), records.ReasonEnvelopeInvalid, err, rec)))
		return
	}
	f.decoded.Inc(ctx, 1)
	keyed(env.GetEntityKey(), canon)
}
