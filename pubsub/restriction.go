package pubsub

import (
	"errors"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*readRestriction)(nil)).Elem())
}

// readRestriction is the reader's restriction: its position (one per pull), whether the
// reader is done (drained), and the ack ids of the messages the previous call emitted. A
// restriction with ack ids is the residual of that call's checkpoint, so the runner only runs
// it after that call's bundle committed: the next call acknowledges them first. This works on
// every runner and whichever worker runs the residual, and it does not depend on the runner
// finalizing every bundle.
type readRestriction struct {
	Pos  int64
	Done bool
	Acks []string
}

// readTracker claims the restriction's one position; a checkpoint splits it into a done
// primary and a residual at the next position carrying the ack ids set by setAcks.
type readTracker struct {
	rest    readRestriction
	claimed bool
	next    []string
	err     error
}

var errClaim = errors.New("pubsub reader: bad claim")

// TryClaim claims the restriction's position, or stops the reader when pos is endPos.
func (t *readTracker) TryClaim(pos any) bool {
	p, _ := pos.(int64)
	switch {
	case t.rest.Done:
		return false
	case p == endPos:
		t.rest.Done = true
		return false
	case p != t.rest.Pos || t.claimed:
		t.err = errClaim
		return false
	}
	t.claimed = true
	return true
}

func (t *readTracker) GetError() error { return t.err }

// TrySplit only checkpoints (fraction 0): the reader has nothing to share with another.
func (t *readTracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if t.rest.Done || fraction > 0 {
		return t.rest, nil, nil
	}
	res := readRestriction{Pos: t.rest.Pos + 1, Acks: t.next}
	t.rest = readRestriction{Pos: t.rest.Pos, Done: true}
	return t.rest, res, nil
}

func (t *readTracker) GetProgress() (done, remaining float64) {
	if t.rest.Done {
		return 1, 0
	}
	return 0, 1
}

func (t *readTracker) IsDone() bool        { return t.rest.Done }
func (t *readTracker) GetRestriction() any { return t.rest }
func (t *readTracker) IsBounded() bool     { return true }
