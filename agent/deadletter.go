package agent

import (
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/budget"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// deadLetterOf builds the dead letter of err for entity at event time atMs (records.DeadLetter,
// host.DeadLetter): the reason of the *Error inside err (internal_panic for an untyped error),
// and err's text as the detail.
func deadLetterOf(entity []byte, atMs int64, err error) *pb.ActivationErrorRecord {
	reason := records.ReasonInternalPanic
	var e *Error
	if errors.As(err, &e) {
		reason = e.Reason
	}
	return records.DeadLetter(entity, atMs, string(reason), err.Error())
}

// deadLetter is the dead letter of err for the call's input: the envelope (or the snapshot
// being restored) travels with it, so the record can be processed again.
func (c *call) deadLetter(err error) *pb.ActivationErrorRecord {
	d := deadLetterOf(c.entity, c.now, err)
	switch {
	case c.input != nil:
		records.WithEnvelope(d, budget.Unstamped(c.input))
	case c.snapshot != nil:
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c.snapshot)
		d.FailedInput = &pb.ActivationErrorRecord_RawRecord{RawRecord: b}
	}
	return d
}
