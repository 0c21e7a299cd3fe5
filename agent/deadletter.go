package agent

import (
	"errors"
	"strings"

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
