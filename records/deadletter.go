package records

import (
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// DeadLetter is the dead-letter record of a failure of reason for entity at event time atMs,
// detail its text. The detail is made valid UTF-8, and the no-break spaces that protobuf-go
// mixes into its error texts on purpose (so nobody matches them) become plain spaces, so the
// same failure always gives the same bytes whatever binary reports it.
func DeadLetter(entity []byte, atMs int64, reason, detail string) *pb.ActivationErrorRecord {
	detail = strings.ToValidUTF8(detail, "\uFFFD")
	return &pb.ActivationErrorRecord{
		EntityKey:   entity,
		Reason:      reason,
		Detail:      strings.ReplaceAll(detail, "\u00a0", " "),
		EventTimeMs: atMs,
	}
}

// WithEnvelope sets d's failed input to env, as deterministic binary bytes, and returns d.
func WithEnvelope(d *pb.ActivationErrorRecord, env *pb.AgentEnvelope) *pb.ActivationErrorRecord {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
	if err == nil {
		d.FailedInput = &pb.ActivationErrorRecord_Envelope{Envelope: b}
	}
	return d
}

// WithRawRecord sets d's failed input to a record that never decoded, and returns d.
func WithRawRecord(d *pb.ActivationErrorRecord, rec []byte) *pb.ActivationErrorRecord {
	if len(rec) > 0 {
		d.FailedInput = &pb.ActivationErrorRecord_RawRecord{RawRecord: rec}
	}
	return d
}
