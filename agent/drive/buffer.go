package drive

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// orderTagPrefix starts the tag of an ordering timer; the rest is the bucket's event time.
const orderTagPrefix = "order:"

// OrderTag is the timer tag of the ordering bucket bucketMs.
func OrderTag(bucketMs int64) string { return orderTagPrefix + strconv.FormatInt(bucketMs, 10) }

// bucketOf rounds an event time up to the ordering resolution: the watermark passing the bucket
// proves every envelope up to it has arrived.
func bucketOf(eventMs, resolutionMs int64) int64 {
	if resolutionMs <= 1 {
		return eventMs
	}
	q := eventMs / resolutionMs
	if eventMs%resolutionMs != 0 && eventMs > 0 {
		q++
	}
	return q * resolutionMs
}

// The ordering buffer is a sequence of frames: i64be(event time) || uvarint(length) || bytes.
// An envelope's frame carries its binary AgentEnvelope; a timer's frame carries timerMark and
// the timer's tag, at the timer's event time. A serialized AgentEnvelope never starts with a
// zero byte, so the two cannot be confused. In a Beam bag, an arriving envelope adds a
// one-frame element; a firing rewrites what is left (envelopes not yet due and the armed
// timers) as one element, so a backlog costs one clear and one add however long it is, and
// reading it never decodes an envelope that is not due.
type frame struct {
	eventMs int64
	data    []byte
}

const timerMark = 0x00

// appendFrame appends one envelope's frame to b.
func appendFrame(b []byte, eventMs int64, env []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(eventMs))
	b = binary.AppendUvarint(b, uint64(len(env)))
	return append(b, env...)
}

// AppendTimers appends the frames of the armed timers to b, in tag order.
func AppendTimers(b []byte, t Timers) []byte {
	for _, tag := range t.tags() {
		b = binary.BigEndian.AppendUint64(b, uint64(t[tag]))
		b = binary.AppendUvarint(b, uint64(1+len(tag)))
		b = append(append(b, timerMark), tag...)
	}
	return b
}

var errBrokenFrame = errors.New("broken ordering-buffer frame")

func parseFrames(elem []byte, out []frame) ([]frame, error) {
	for len(elem) > 0 {
		if len(elem) < 9 {
			return out, errBrokenFrame
		}
		t := int64(binary.BigEndian.Uint64(elem))
		n, w := binary.Uvarint(elem[8:])
		if w <= 0 || n > uint64(len(elem)-8-w) {
			return out, errBrokenFrame
		}
		out = append(out, frame{eventMs: t, data: elem[8+w : 8+w+int(n)]})
		elem = elem[8+w+int(n):]
	}
	return out, nil
}

// bufferedEnv is one due envelope: decoded, and its bytes (the tie-breaker of the order).
type bufferedEnv struct {
	Env *pb.AgentEnvelope
	Raw []byte
}

// splitBuffer reads the buffer's elements at a firing at atMs. It returns the envelopes with event
// time ≤ atMs in processing order (event time, then bytes), the envelopes left behind packed
// as one element (without timers; nil when none), the armed timers, and the count of elements
// or frames that could not be read (impossible unless the state was corrupted).
func splitBuffer(elems [][]byte, atMs int64) (due []bufferedEnv, rest []byte, timers Timers, bad int) {
	var frames []frame
	for _, e := range elems {
		var err error
		if frames, err = parseFrames(e, frames); err != nil {
			bad++
		}
	}
	timers = Timers{}
	for _, f := range frames {
		if len(f.data) > 0 && f.data[0] == timerMark {
			timers[string(f.data[1:])] = f.eventMs
			continue
		}
		if f.eventMs > atMs {
			rest = appendFrame(rest, f.eventMs, f.data)
			continue
		}
		env := &pb.AgentEnvelope{}
		if err := proto.Unmarshal(f.data, env); err != nil {
			bad++
			continue
		}
		due = append(due, bufferedEnv{Env: env, Raw: f.data})
	}
	sortDue(due)
	return due, rest, timers, bad
}

// sortDue sorts envelopes into processing order: event time, ties broken by their bytes.
func sortDue(due []bufferedEnv) {
	slices.SortFunc(due, func(a, b bufferedEnv) int {
		if c := cmp.Compare(a.Env.GetEventTimeMs(), b.Env.GetEventTimeMs()); c != 0 {
			return c
		}
		return bytes.Compare(a.Raw, b.Raw)
	})
}

// ReadBuffer reads a shell's raw ordering buffer (the elements of its bag) at a firing at
// atMs: the backlog Step takes, which keeps the envelopes not yet due, so that the step's
// Effects carry the buffer's new content (Effects.Bag).
func ReadBuffer(elems [][]byte, atMs int64) *Backlog {
	bl := &Backlog{raw: true}
	bl.Due, bl.rest, bl.Timers, bl.Bad = splitBuffer(elems, atMs)
	return bl
}

// Bag is the buffer a backlog read by ReadBuffer leaves: the envelopes not yet due (and those
// left behind a burst whose window is still open) and the armed timers (as a step left them), packed as one element; nil when nothing is left.
func (bl *Backlog) Bag() []byte {
	b := bl.rest
	for _, d := range bl.open {
		b = appendFrame(b, d.Env.GetEventTimeMs(), d.Raw)
	}
	return AppendTimers(b, bl.Timers)
}

// BagOps is how a step's effects change a buffer kept as a bag of raw elements: clear it when
// clearFirst is set, then add add when it is not empty (an arriving envelope's frame, a restore's
// armed timers, or what a firing left).
func (e *Effects) BagOps() (clearFirst bool, add []byte) {
	switch {
	case e.Buffer != nil:
		return false, appendFrame(nil, e.Buffer.Env.GetEventTimeMs(), e.Buffer.Raw)
	case len(e.ArmTimers) > 0:
		return false, AppendTimers(nil, e.ArmTimers)
	case e.Rewrite:
		return true, e.Bag
	}
	return false, nil
}

// Rebased is the buffer a step's rewrite leaves (rewritten, its Effects.Bag) when the buffer
// the step read (read) has since become now: the elements added meanwhile follow the
// rewrite, packed as one element. ok is false when now does not start with read: the buffer
// changed otherwise, and the step is stale.
func Rebased(read, now [][]byte, rewritten []byte) (bag []byte, ok bool) {
	if len(read) > len(now) {
		return nil, false
	}
	for i, e := range read {
		if !bytes.Equal(e, now[i]) {
			return nil, false
		}
	}
	bag = append([]byte(nil), rewritten...)
	for _, e := range now[len(read):] {
		bag = append(bag, e...)
	}
	return bag, true
}

// Envelopes returns the envelopes a raw buffer holds, whatever their time, in processing
// order, as their bytes; what does not decode is left out.
func Envelopes(elems [][]byte) [][]byte {
	due, _, _, _ := splitBuffer(elems, math.MaxInt64)
	out := make([][]byte, len(due))
	for i, d := range due {
		out[i] = d.Raw
	}
	return out
}
