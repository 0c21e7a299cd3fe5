package pubsub

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"sync/atomic"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/timers"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func init() {
	register.DoFn8x1[context.Context, beam.EventTime, state.Provider, timers.Provider, []byte, []byte, func([]byte, []byte), func([]byte), error](&dedupFn{})
}

// Stable names of the dedup step (the --update contract, pinned in the update manifest).
const (
	DedupScope   = "Dedup"    // scope of the stateful step: "Dedup/pubsub.dedupFn"
	DedupStateID = "dedup.v1" // value cell of []byte: the key's recent delivery ids
	DedupTimerID = "dedup.v1" // the one event-time timer family: forgets an idle key's ids
)

// Trace attributes of a dropped duplicate delivery (a TraceEvent of type
// EVENT_TYPE_UNSPECIFIED, one per duplicate).
const (
	AttrEvent         = "beamagents.event"
	EventDuplicate    = "duplicate_delivery"
	AttrDedupID       = "beamagents.dedup_id"
	AttrDedupWindowMs = "beamagents.dedup_window_ms"
)

// dedupFn drops second deliveries: a key's recent delivery ids (the envelope id attribute
// when the producer set one, else the Pub/Sub message id) live in one value cell with their
// event times. An id is remembered until the key's newest event time is DedupWindow past it,
// and at most DedupMaxIDs ids per key (the oldest go first); a timer at newest+window clears
// an idle key's cell.
type dedupFn struct {
	WindowMs int64
	MaxIDs   int
	Run      string

	Seen  state.Value[[]byte]
	Timer timers.EventTime

	dups beam.Counter
}

func newDedupFn(o Options) *dedupFn {
	o = o.resolved()
	return &dedupFn{WindowMs: o.DedupWindow.Milliseconds(), MaxIDs: o.DedupMaxIDs, Run: o.Run,
		Seen: state.MakeValueState[[]byte](DedupStateID), Timer: timers.InEventTime(DedupTimerID)}
}

func (f *dedupFn) Setup() { f.dups = beam.NewCounter("beamagents", "duplicates_dropped") }

func (f *dedupFn) ProcessElement(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key, framed []byte, emit func([]byte, []byte), traces func([]byte)) error {
	id, env, ok := unframeID(framed)
	if !ok {
		emit(key, framed) // not framed: cannot be deduplicated; RunAgent judges the bytes
		return nil
	}
	cur, _, err := f.Seen.Read(sp)
	if err != nil {
		return err
	}
	seen := parseSeen(cur)
	at := mtime.Time(ts).Milliseconds()
	if seen.has(id) {
		f.dups.Inc(ctx, 1)
		add(lookupRun(f.Run), func(r *Run) *atomic.Int64 { return &r.duplicates }, 1)
		traces(duplicateTrace(key, id, at, f.WindowMs))
		return nil
	}
	seen = seen.add(id, at, f.WindowMs, f.MaxIDs)
	if err := f.Seen.Write(sp, seen.encode()); err != nil {
		return err
	}
	f.Timer.Set(tp, mtime.Time(seen.newest()+f.WindowMs).ToTime())
	emit(key, env)
	return nil
}

// OnTimer fires when the watermark is a window past the key's newest delivery: every id it
// remembers is out of the window, so the cell is cleared.
func (f *dedupFn) OnTimer(ctx context.Context, ts beam.EventTime, sp state.Provider, tp timers.Provider, key []byte, t timers.Context, emit func([]byte, []byte), traces func([]byte)) error {
	cur, _, err := f.Seen.Read(sp)
	if err != nil {
		return err
	}
	if s := parseSeen(cur); len(s) > 0 && s.newest()+f.WindowMs > mtime.Time(ts).Milliseconds() {
		return nil // a newer delivery moved the timer; this firing is stale
	}
	return f.Seen.Clear(sp)
}

// seenIDs is the cell's content in arrival order: repeated (varint event ms, uvarint len, id).
type seenID struct {
	ms int64
	id string
}
type seenIDs []seenID

func parseSeen(b []byte) seenIDs {
	var out seenIDs
	for len(b) > 0 {
		ms, w := binary.Varint(b)
		if w <= 0 {
			return out // a damaged tail only forgets ids: at worst a duplicate runs again
		}
		b = b[w:]
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return out
		}
		out = append(out, seenID{ms: ms, id: string(b[w : w+int(n)])})
		b = b[w+int(n):]
	}
	return out
}

func (s seenIDs) encode() []byte {
	var b []byte
	for _, e := range s {
		b = binary.AppendVarint(b, e.ms)
		b = binary.AppendUvarint(b, uint64(len(e.id)))
		b = append(b, e.id...)
	}
	return b
}

func (s seenIDs) has(id string) bool {
	for _, e := range s {
		if e.id == id {
			return true
		}
	}
	return false
}

func (s seenIDs) newest() int64 {
	n := int64(mtime.MinTimestamp)
	for _, e := range s {
		n = max(n, e.ms)
	}
	return n
}

// add appends id and forgets the ids a window older than the newest, then the oldest
// beyond maxIDs.
func (s seenIDs) add(id string, ms, windowMs int64, maxIDs int) seenIDs {
	s = append(s, seenID{ms: ms, id: id})
	newest := s.newest()
	kept := s[:0]
	for _, e := range s {
		if e.ms+windowMs > newest {
			kept = append(kept, e)
		}
	}
	if len(kept) > maxIDs {
		kept = kept[len(kept)-maxIDs:]
	}
	return kept
}

// duplicateTrace is the trace event of a dropped duplicate; its ids derive from the key and
// the delivery id, so a retried bundle traces identically.
func duplicateTrace(key []byte, id string, atMs, windowMs int64) []byte {
	h := sha256.New()
	h.Write([]byte("beamagents.dedup.v1\x00"))
	h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(key))))
	h.Write(key)
	h.Write([]byte(id))
	sum := h.Sum(nil)
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&pb.TraceEvent{
		TraceId: sum[:16], SpanId: sum[16:24], EntityKey: key, StartMs: atMs, EndMs: atMs,
		Attributes: map[string]string{
			AttrEvent: EventDuplicate, AttrDedupID: id, AttrDedupWindowMs: strconv.FormatInt(windowMs, 10),
			agent.AttrStatus: "dropped",
		},
	})
	return b
}
