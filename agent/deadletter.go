package agent

import (
	"errors"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// DeadLetter builds the dead letter of err for entity at event time atMs: the reason of the
// *Error inside err (internal_panic for an untyped error), and err's text as the detail. The
// detail is made valid UTF-8, and the no-break spaces that protobuf-go mixes into its error
// texts on purpose (so nobody matches them) become plain spaces, so the same failure always
// gives the same bytes whatever binary reports it.
func DeadLetter(entity []byte, atMs int64, err error) *pb.ActivationErrorRecord {
	reason := ReasonInternalPanic
	var e *Error
	if errors.As(err, &e) {
		reason = e.Reason
	}
	detail := strings.ToValidUTF8(err.Error(), "\uFFFD")
	return &pb.ActivationErrorRecord{
		EntityKey:   entity,
		Reason:      string(reason),
		Detail:      strings.ReplaceAll(detail, "\u00a0", " "),
		EventTimeMs: atMs,
	}
}

// deadLetter is the dead letter of err for the call's input: the envelope (or the snapshot
// being restored) travels with it, so the record can be processed again.
func (c *call) deadLetter(err error) *pb.ActivationErrorRecord {
	d := DeadLetter(c.entity, c.now, err)
	switch {
	case c.input != nil:
		WithEnvelope(d, c.input)
	case c.snapshot != nil:
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c.snapshot)
		d.FailedInput = &pb.ActivationErrorRecord_RawRecord{RawRecord: b}
	}
	return d
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
