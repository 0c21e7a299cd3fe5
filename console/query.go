package console

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// Minute is the counters of one event-time minute.
type Minute struct {
	AtMs                                                   int64
	Activations, ModelCalls, Tokens, Intents, Finals, Dead int64
}

func (m *Minute) add(c counters) {
	m.Activations += c[cActivations]
	m.ModelCalls += c[cModelCalls]
	m.Tokens += c[cTokens]
	m.Intents += c[cIntents]
	m.Finals += c[cFinals]
	m.Dead += c[cDead]
}

// ReasonCount is how many dead letters carry one reason.
type ReasonCount struct {
	Reason string
	Count  int64
}

// Suspended is a key whose latest attempt suspended it, and the intent it waits for.
type Suspended struct {
	Key      []byte
	Seq      int64
	Since    int64
	IntentID string
	Intent   *pb.ToolIntent // nil when neither the intents output nor the trace names it
	Deadline int64
}

// Overview is what the overview page shows.
type Overview struct {
	Totals         Minute
	Minutes        []Minute // in time order, only minutes with records
	Reasons        []ReasonCount
	Suspended      []Suspended // the first MaxListed keys
	SuspendedTotal int
	Entities       int
	Malformed      int64
	Skipped        int64 // records larger than MaxRecordBytes, not read
}

// MaxListed bounds the rows a page lists at once.
const MaxListed = 200

// Overview reads the overview.
func (s *Store) Overview() (*Overview, error) {
	o := &Overview{}
	err := s.db.View(func(tx *bolt.Tx) error {
		tx.Bucket(bMinutes).ForEach(func(k, v []byte) error {
			var c counters
			c.decode(v)
			m := Minute{AtMs: int64(binary.BigEndian.Uint64(k)) * 60_000}
			m.add(c)
			o.Totals.add(c)
			o.Minutes = append(o.Minutes, m)
			return nil
		})
		tx.Bucket(bReasons).ForEach(func(k, v []byte) error {
			o.Reasons = append(o.Reasons, ReasonCount{Reason: reasonOf(k, v), Count: int64(binary.BigEndian.Uint64(v))})
			return nil
		})
		slices.SortStableFunc(o.Reasons, func(a, b ReasonCount) int { return int(b.Count - a.Count) })
		o.SuspendedTotal = tx.Bucket(bSuspended).Stats().KeyN
		o.Entities = tx.Bucket(bEntities).Stats().KeyN
		o.Malformed = metaCount(tx, "malformed")
		o.Skipped = metaCount(tx, "skipped")
		c := tx.Bucket(bSuspended).Cursor()
		for k, _ := c.First(); k != nil && len(o.Suspended) < MaxListed; k, _ = c.Next() {
			e := readEntity(tx, k)
			o.Suspended = append(o.Suspended, suspendedOf(tx, k, e))
		}
		return nil
	})
	return o, err
}

func metaCount(tx *bolt.Tx, name string) int64 {
	if v := tx.Bucket(bMeta).Get([]byte(name)); len(v) == 8 {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// suspendedOf is the suspension of the entity whose key's stored form is key.
func suspendedOf(tx *bolt.Tx, key []byte, e *entity) Suspended {
	sp := Suspended{Key: fullKey(tx, key), Seq: e.EndSeq, Since: e.EndMs, IntentID: e.suspendedOn(), Deadline: e.SuspDeadline}
	if sp.IntentID != "" {
		sp.Intent = lookupIntent(tx, sp.IntentID)
	}
	return sp
}

func readEntity(tx *bolt.Tx, key []byte) *entity {
	e := &entity{}
	if v := tx.Bucket(bEntities).Get(key); v != nil {
		json.Unmarshal(v, e)
	}
	return e
}

// lookupIntent is the intent of id: the intents output's record, else what its trace said.
func lookupIntent(tx *bolt.Tx, id string) *pb.ToolIntent {
	for _, b := range [][]byte{bIntents, bEmitted} {
		if v := tx.Bucket(b).Get(storeKey([]byte(id))); v != nil {
			ti := &pb.ToolIntent{}
			if proto.Unmarshal(v, ti) == nil {
				return ti
			}
		}
	}
	return nil
}

// Activation is one activation of a key, as its trace tells it.
type Activation struct {
	Seq        int64
	TraceID    []byte
	StartMs    int64
	EndMs      int64
	Status     string   // the last attempt's end status
	Tools      []string // tool intents and tool calls, in trace order
	ModelCalls int
	Errors     []string
}

// Entity is what the entity page shows of one key.
type Entity struct {
	Key         []byte
	Known       bool
	Status      string
	Suspended   *Suspended
	Activations []Activation
	Snapshot    *pb.StateSnapshot
	Intents     []*pb.ToolIntent
	Finals      []*pb.FinalReply
	DeadLetters []DeadLetter
	// LongTerm is the key's long-term memory, when the console has the store (Options.Memory).
	LongTerm *LongTerm
}

// Entity reads one key.
func (s *Store) Entity(key []byte) (*Entity, error) { return s.entity(storeKey(key), key) }

// entity reads the entity whose key's stored form is key; shown is what it is called while
// unknown.
func (s *Store) entity(key, shown []byte) (*Entity, error) {
	out := &Entity{Key: shown}
	err := s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bEntities).Get(key) == nil {
			return nil
		}
		out.Key, out.Known = fullKey(tx, key), true
		e := readEntity(tx, key)
		out.Status = e.Status
		if tx.Bucket(bSuspended).Get(key) != nil {
			sp := suspendedOf(tx, key, e)
			out.Suspended = &sp
		}
		prefix := lp(key)
		c := tx.Bucket(bActs).Cursor()
		for k, tid := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(out.Activations) < MaxListed; k, tid = c.Next() {
			a := activationOf(traceEvents(tx, tid))
			a.Seq, a.TraceID = int64(binary.BigEndian.Uint64(k[len(prefix):])), slices.Clone(tid)
			out.Activations = append(out.Activations, a)
		}
		if v := tx.Bucket(bSnaps).Get(key); v != nil {
			snap := &pb.StateSnapshot{}
			if proto.Unmarshal(v, snap) == nil {
				out.Snapshot = snap
			}
		}
		bk := tx.Bucket(bByKey).Cursor()
		for k, ref := bk.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, ref = bk.Next() {
			switch kind, _ := records.KindOfCode(k[len(prefix)]); kind.Out {
			case records.OutIntent:
				if ti := lookupIntent(tx, string(ref)); ti != nil && len(out.Intents) < MaxListed {
					out.Intents = append(out.Intents, ti)
				}
			case records.OutFinal:
				f := &pb.FinalReply{}
				if proto.Unmarshal(tx.Bucket(bFinals).Get(ref), f) == nil && len(out.Finals) < MaxListed {
					out.Finals = append(out.Finals, f)
				}
			case records.OutDeadLetter:
				if d, ok := readDead(tx, ref); ok && len(out.DeadLetters) < MaxListed {
					out.DeadLetters = append(out.DeadLetters, d)
				}
			}
		}
		return nil
	})
	return out, err
}

// activationOf summarizes one activation's events.
func activationOf(evs []*pb.TraceEvent) Activation {
	var a Activation
	var endAt int64 = -1
	for i, ev := range evs {
		at := ev.GetStartMs()
		if i == 0 || at < a.StartMs {
			a.StartMs = at
		}
		a.EndMs = max(a.EndMs, ev.GetEndMs(), at)
		attrs := ev.GetAttributes()
		switch ev.GetEventType() {
		case pb.TraceEvent_ACTIVATION_END:
			if at >= endAt {
				endAt, a.Status = at, attrs[tracing.AttrActivationStatus]
			}
		case pb.TraceEvent_LLM_CALL:
			a.ModelCalls++
		case pb.TraceEvent_INTENT_EMITTED:
			if t := attrs[tracing.AttrToolName]; t != "" && !slices.Contains(a.Tools, t) {
				a.Tools = append(a.Tools, t)
			}
		case pb.TraceEvent_ERROR:
			a.Errors = append(a.Errors, attrs[tracing.AttrReason])
		}
	}
	return a
}

// Trace reads one trace's events in time order (ties in the order an attempt emits them).
func (s *Store) Trace(traceID []byte) ([]*pb.TraceEvent, error) {
	var evs []*pb.TraceEvent
	err := s.db.View(func(tx *bolt.Tx) error {
		evs = traceEvents(tx, storeKey(traceID))
		return nil
	})
	return evs, err
}

// traceEvents reads the events of the trace whose id's stored form is traceID.
func traceEvents(tx *bolt.Tx, traceID []byte) []*pb.TraceEvent {
	var evs []*pb.TraceEvent
	if len(traceID) == 0 {
		return nil
	}
	c := tx.Bucket(bTraces).Cursor()
	for k, v := c.Seek(traceID); k != nil && bytes.HasPrefix(k, traceID) && len(k) == len(traceID)+8+16; k, v = c.Next() {
		ev := &pb.TraceEvent{}
		if proto.Unmarshal(v, ev) == nil {
			evs = append(evs, ev)
		}
	}
	sortEvents(evs)
	return evs
}

// DeadLetter is one dead letter with its store id (what a redrive names it by).
type DeadLetter struct {
	ID     []byte
	Record *pb.ActivationErrorRecord
}

// ReasonGroup is the dead letters of one reason.
type ReasonGroup struct {
	Reason string
	Count  int64
	Listed []DeadLetter // the latest MaxListed
}

// DeadLetters reads the dead letters grouped by reason (the most frequent first), each group
// with its latest records.
func (s *Store) DeadLetters() ([]ReasonGroup, error) {
	o, err := s.Overview()
	if err != nil {
		return nil, err
	}
	groups := make([]ReasonGroup, 0, len(o.Reasons))
	err = s.db.View(func(tx *bolt.Tx) error {
		for _, r := range o.Reasons {
			g := ReasonGroup{Reason: r.Reason, Count: r.Count}
			prefix := lp(storeKey([]byte(r.Reason)))
			c := tx.Bucket(bDeadIdx).Cursor()
			k, _ := c.Seek(append(slices.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))
			if k == nil {
				k, _ = c.Last()
			} else {
				k, _ = c.Prev()
			}
			for ; k != nil && bytes.HasPrefix(k, prefix) && len(g.Listed) < MaxListed; k, _ = c.Prev() {
				if d, ok := readDead(tx, k[len(k)-16:]); ok {
					g.Listed = append(g.Listed, d)
				}
			}
			groups = append(groups, g)
		}
		return nil
	})
	return groups, err
}

// DeadLettersOf reads the dead letters of ids, and of every dead letter of the reasons.
func (s *Store) DeadLettersOf(ids [][]byte, reasons []string) ([]DeadLetter, error) {
	var out []DeadLetter
	seen := map[string]bool{}
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, r := range reasons {
			prefix := lp(storeKey([]byte(r)))
			c := tx.Bucket(bDeadIdx).Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				ids = append(ids, slices.Clone(k[len(k)-16:]))
			}
		}
		for _, id := range ids {
			if seen[string(id)] {
				continue
			}
			seen[string(id)] = true
			if d, ok := readDead(tx, id); ok {
				out = append(out, d)
			}
		}
		return nil
	})
	return out, err
}

func readDead(tx *bolt.Tx, id []byte) (DeadLetter, bool) {
	v := tx.Bucket(bDead).Get(id)
	if v == nil {
		return DeadLetter{}, false
	}
	d := &pb.ActivationErrorRecord{}
	if proto.Unmarshal(v, d) != nil {
		return DeadLetter{}, false
	}
	return DeadLetter{ID: slices.Clone(id), Record: d}, true
}

// Intent reads one intent by id.
func (s *Store) Intent(id string) (*pb.ToolIntent, error) {
	var ti *pb.ToolIntent
	err := s.db.View(func(tx *bolt.Tx) error {
		ti = lookupIntent(tx, id)
		return nil
	})
	return ti, err
}

// HasTrace reports whether any event of the trace was ingested.
func (s *Store) HasTrace(traceID []byte) bool {
	found := false
	s.db.View(func(tx *bolt.Tx) error {
		id := storeKey(traceID)
		k, _ := tx.Bucket(bTraces).Cursor().Seek(id)
		found = len(id) > 0 && k != nil && bytes.HasPrefix(k, id)
		return nil
	})
	return found
}

// KeysWithPrefix lists up to limit known entity keys starting with prefix. A prefix longer
// than what a long key's stored form keeps of it is looked for among the keys sharing that
// part, of which at most limit+MaxListed are looked at.
func (s *Store) KeysWithPrefix(prefix []byte, limit int) [][]byte {
	var out [][]byte
	seek := prefix[:min(len(prefix), keptBytes)]
	s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bEntities).Cursor()
		looked := 0
		for k, _ := c.Seek(seek); k != nil && bytes.HasPrefix(k, seek) && len(out) < limit && looked < limit+MaxListed; k, _ = c.Next() {
			looked++
			if full := fullKey(tx, k); bytes.HasPrefix(full, prefix) {
				out = append(out, full)
			}
		}
		return nil
	})
	return out
}

// Action is one logged action: who did what.
type Action struct {
	AtMs   int64  `json:"at_ms"`
	Who    string `json:"who"`
	What   string `json:"what"`
	Detail string `json:"detail"`
}

// LogAction records an action.
func (s *Store) LogAction(a Action) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bActions)
		n, _ := b.NextSequence()
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		return b.Put(cat(be(a.AtMs), be(int64(n))), v)
	})
	if err != nil {
		return &Error{Code: CodeStore, Detail: "logging an action", Err: err}
	}
	s.notify()
	return nil
}

// Actions lists the latest actions, newest first.
func (s *Store) Actions(limit int) []Action {
	var out []Action
	s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bActions).Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var a Action
			if json.Unmarshal(v, &a) == nil {
				out = append(out, a)
			}
		}
		return nil
	})
	return out
}
