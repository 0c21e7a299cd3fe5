package transforms

import (
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/drive"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/progress"
)

func init() {
	register.DoFn4x0[context.Context, []byte, func([]byte, []byte), func([]byte)](&decodeFn{})
	register.Emitter2[[]byte, []byte]()
	register.Emitter1[[]byte]()
}

// Format names how envelope records are encoded.
type Format string

// Record formats.
const (
	// Binary: each record is one binary-serialized AgentEnvelope.
	Binary Format = "binary"
	// JSON: each record is one AgentEnvelope in protojson (one line of a JSON Lines file).
	JSON Format = "json"
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
	env, canon, err := decodeEnvelope(f.Format, rec)
	if err != nil {
		f.invalid.Inc(ctx, 1)
		progress.DeadLetters(1)
		dead(drive.Marshal(drive.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), agent.ReasonEnvelopeInvalid, err, rec)))
		return
	}
	f.decoded.Inc(ctx, 1)
	keyed(env.GetEntityKey(), canon)
}

// decodeEnvelope decodes one record and checks that the envelope is actionable: an entity key
// and a payload. It returns the envelope (possibly partial, for the dead letter's entity key
// and event time) and its deterministic binary serialization. Errors are *agent.Error with
// reason envelope_invalid.
func decodeEnvelope(format Format, rec []byte) (*pb.AgentEnvelope, []byte, error) {
	if format != Binary && format != JSON {
		return nil, nil, invalid(nil, "unknown record format %q", format)
	}
	return drive.DecodeEnvelope(format == JSON, rec)
}

func invalid(err error, format string, args ...any) error {
	return &agent.Error{Reason: agent.ReasonEnvelopeInvalid, Detail: fmt.Sprintf(format, args...), Err: err}
}
