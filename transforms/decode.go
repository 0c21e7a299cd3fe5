package transforms

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func init() {
	register.DoFn4x0[context.Context, []byte, func([]byte, []byte), func([]byte)](&decodeFn{})
	register.DoFn4x0[context.Context, []byte, func([]byte, []byte), func([]byte)](&decodeSnapshotFn{})
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
	env, canon, err := decodeEnvelope(f.Format, rec)
	if err != nil {
		f.invalid.Inc(ctx, 1)
		dead(deadLetter(env, agent.ReasonEnvelopeInvalid, err))
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
	env := &pb.AgentEnvelope{}
	if err := unmarshal(format, rec, env); err != nil {
		return nil, nil, invalid(err, "not a %s AgentEnvelope", format)
	}
	if len(env.GetEntityKey()) == 0 {
		return env, nil, invalid(nil, "entity_key is empty")
	}
	if env.GetPayload() == nil {
		return env, nil, invalid(nil, "no payload")
	}
	canon, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
	if err != nil {
		return env, nil, invalid(err, "re-encoding")
	}
	return env, canon, nil
}

// unmarshal decodes rec, a JSON record (protojson) or else a binary one, into m.
func unmarshal(format Format, rec []byte, m proto.Message) error {
	if format == JSON {
		return protojson.Unmarshal(rec, m)
	}
	return proto.Unmarshal(rec, m)
}

func invalid(err error, format string, args ...any) error {
	return &agent.Error{Reason: agent.ReasonEnvelopeInvalid, Detail: fmt.Sprintf(format, args...), Err: err}
}

func deadLetter(env *pb.AgentEnvelope, reason agent.Reason, err error) []byte {
	if !errors.Is(err, &agent.Error{Reason: reason}) {
		err = &agent.Error{Reason: reason, Err: err}
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(agent.DeadLetter(env.GetEntityKey(), env.GetEventTimeMs(), err))
	return b // cannot fail: the detail is valid UTF-8
}

// restoreMark starts a RunAgent input value that is a state restore rather than an envelope.
// A serialized AgentEnvelope never starts with a zero byte (no protobuf field has number 0),
// so the two cannot be confused.
const restoreMark = 0x00

// DecodeSnapshots turns StateSnapshot records (as export requests emit them, binary or
// protojson) into RunAgent inputs that restore each snapshot's key
// (PCollection<KV<[]byte, []byte>>, to be flattened with DecodeEnvelopes' output), and dead
// letters for records that do not decode. A restore applies only to a key without state;
// it is applied when it arrives, before the key's buffered envelopes.
func DecodeSnapshots(s beam.Scope, format Format, records beam.PCollection) (keyed, dead beam.PCollection) {
	s = s.Scope("DecodeSnapshots")
	return beam.ParDo2(s, &decodeSnapshotFn{Format: format}, records)
}

type decodeSnapshotFn struct {
	Format Format
}

func (f *decodeSnapshotFn) ProcessElement(ctx context.Context, rec []byte, keyed func([]byte, []byte), dead func([]byte)) {
	snap := &pb.StateSnapshot{}
	err := unmarshal(f.Format, rec, snap)
	if err == nil && len(snap.GetEntityKey()) == 0 {
		err = invalid(nil, "snapshot has no entity key")
	}
	if err != nil {
		dead(deadLetter(&pb.AgentEnvelope{EntityKey: snap.GetEntityKey()}, agent.ReasonRestoreRefused, err))
		return
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(snap)
	keyed(snap.GetEntityKey(), append([]byte{restoreMark}, b...))
}
