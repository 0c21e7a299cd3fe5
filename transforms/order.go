package transforms

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

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

func isOrderTag(tag string) bool { return strings.HasPrefix(tag, orderTagPrefix) }

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

type buffered struct {
	env *pb.AgentEnvelope
	raw []byte
}

// splitDue decodes the buffer and returns the envelopes with event time ≤ atMs in processing
// order, and the raw bytes of the rest. Undecodable entries cannot occur (only canonical
// envelopes are buffered) and are dropped into bad.
func splitDue(raw [][]byte, atMs int64) (due []buffered, rest [][]byte, bad [][]byte) {
	for _, b := range raw {
		env := &pb.AgentEnvelope{}
		if err := proto.Unmarshal(b, env); err != nil {
			bad = append(bad, b)
			continue
		}
		if env.GetEventTimeMs() <= atMs {
			due = append(due, buffered{env: env, raw: b})
		} else {
			rest = append(rest, b)
		}
	}
	slices.SortFunc(due, func(a, b buffered) int {
		if a.env.GetEventTimeMs() != b.env.GetEventTimeMs() {
			if a.env.GetEventTimeMs() < b.env.GetEventTimeMs() {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.raw, b.raw)
	})
	return due, rest, bad
}
