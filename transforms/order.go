package transforms

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Ordering says in which order RunAgent hands a key's envelopes to the activation core.
type Ordering string

// Orderings.
const (
	// EventTimeOrder buffers each envelope in keyed state until the watermark passes its event
	// time (rounded up to OrderResolutionMs), then processes the due envelopes in event-time
	// order, ties broken by their bytes. The order is the same on every run and runner.
	EventTimeOrder Ordering = "event_time"
	// ArrivalOrder processes each envelope when it arrives: cheaper, but Beam does not order a
	// key's elements, so only sources that already deliver a key in order should use it.
	ArrivalOrder Ordering = "arrival"
)

// orderTagPrefix starts the tag of an ordering timer; the rest is the bucket's event time.
const orderTagPrefix = "order:"

func orderTag(bucketMs int64) string { return orderTagPrefix + strconv.FormatInt(bucketMs, 10) }

// bucket rounds an event time up to the ordering resolution: the watermark passing the bucket
// proves every envelope up to it has arrived.
func bucket(eventMs, resolutionMs int64) int64 {
	if resolutionMs <= 1 {
		return eventMs
	}
	q := eventMs / resolutionMs
	if eventMs%resolutionMs != 0 && eventMs > 0 {
		q++
	}
	return q * resolutionMs
}

// The ordering buffer is a bag whose elements are sequences of frames, one frame per
// envelope: i64be(event time) || uvarint(length) || envelope bytes. An arriving envelope adds
// a one-frame element; a firing that leaves envelopes behind rewrites them as one element, so
// a backlog costs one clear and one add however long it is, and reading it never decodes an
// envelope that is not due.
type bufFrame struct {
	eventMs int64
	env     []byte
}

func appendFrame(b []byte, eventMs int64, env []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(eventMs))
	b = binary.AppendUvarint(b, uint64(len(env)))
	return append(b, env...)
}

var errBrokenFrame = errors.New("broken ordering-buffer frame")

func parseFrames(elem []byte, out []bufFrame) ([]bufFrame, error) {
	for len(elem) > 0 {
		if len(elem) < 9 {
			return out, errBrokenFrame
		}
		t := int64(binary.BigEndian.Uint64(elem))
		n, w := binary.Uvarint(elem[8:])
		if w <= 0 || n > uint64(len(elem)-8-w) {
			return out, errBrokenFrame
		}
		out = append(out, bufFrame{eventMs: t, env: elem[8+w : 8+w+int(n)]})
		elem = elem[8+w+int(n):]
	}
	return out, nil
}

type buffered struct {
	env *pb.AgentEnvelope
	raw []byte
}

// splitDue returns the buffered envelopes with event time ≤ atMs in processing order (event
// time, then bytes), the rest re-packed as one bag element (nil when none), and the count
// of elements that could not be read (impossible unless the state was corrupted).
func splitDue(elems [][]byte, atMs int64) (due []buffered, rest []byte, bad int) {
	var frames []bufFrame
	for _, e := range elems {
		var err error
		if frames, err = parseFrames(e, frames); err != nil {
			bad++
		}
	}
	for _, f := range frames {
		if f.eventMs > atMs {
			rest = appendFrame(rest, f.eventMs, f.env)
			continue
		}
		env := &pb.AgentEnvelope{}
		if err := proto.Unmarshal(f.env, env); err != nil {
			bad++
			continue
		}
		due = append(due, buffered{env: env, raw: f.env})
	}
	slices.SortFunc(due, func(a, b buffered) int {
		if c := cmpInt(a.env.GetEventTimeMs(), b.env.GetEventTimeMs()); c != 0 {
			return c
		}
		return bytes.Compare(a.raw, b.raw)
	})
	return due, rest, bad
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
