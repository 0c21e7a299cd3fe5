package console

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// Record is one output record: binary protobuf bytes of its kind's message. A record of no
// kind (the zero Kind) is counted as malformed.
type Record struct {
	Kind records.Kind
	Data []byte
}

// Bucket names. The layout is versioned by the names: a new layout takes new names. Entity
// keys, intent ids, trace ids and reasons inside keys are their stored forms (storeKey).
var (
	bMeta      = []byte("meta.v1")      // "malformed", "skipped" → count
	bOffsets   = []byte("offsets.v1")   // source → offset(8) + sha256 of the file's first bytes
	bSeen      = []byte("seen.v1")      // record id (16) → nil: every record is ingested once
	bMinutes   = []byte("minutes.v1")   // event-time minute (8) → counters
	bReasons   = []byte("reasons.v1")   // 'r' + reason → count(8), then the reason when it is long
	bDead      = []byte("dead.v1")      // record id → ActivationErrorRecord
	bDeadIdx   = []byte("deadidx.v1")   // lp(reason) + time(8) + id → nil
	bTraces    = []byte("traces.v1")    // trace id + start(8) + id → TraceEvent
	bActs      = []byte("acts.v1")      // lp(key) + seq(8) → trace id
	bIntents   = []byte("intents.v1")   // intent id → ToolIntent (highest attempt)
	bEmitted   = []byte("emitted.v1")   // intent id → ToolIntent rebuilt from its INTENT_EMITTED event
	bByKey     = []byte("bykey.v1")     // lp(key) + kind + time(8) + id → record id or intent id
	bFinals    = []byte("finals.v1")    // record id → FinalReply
	bSnaps     = []byte("snaps.v1")     // key → latest StateSnapshot
	bEntities  = []byte("entities.v1")  // key → entity (JSON)
	bSuspended = []byte("suspended.v1") // key → nil while its latest attempt left it suspended
	bActions   = []byte("actions.v1")   // time(8) + n(8) → action (JSON)
	bLongKeys  = []byte("longkeys.v1")  // key → the whole entity key, for a long one

	allBuckets = [][]byte{bMeta, bOffsets, bSeen, bMinutes, bReasons, bDead, bDeadIdx, bTraces, bActs,
		bIntents, bEmitted, bByKey, bFinals, bSnaps, bEntities, bSuspended, bActions, bLongKeys}
)

// Store is the console's embedded store, a bbolt file. Every ingest is one transaction that
// also records how far its source was read, so a restart resumes where the last commit ended
// and a crash never counts a record twice.
type Store struct {
	db      *bolt.DB
	mu      sync.Mutex
	changed chan struct{}
	version uint64
}

// Open opens (creating) the store at path.
func Open(path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, &Error{Code: CodeStore, Detail: "creating the store directory", Err: err}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, &Error{Code: CodeStore, Detail: "opening " + path, Err: err}
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		db.Close()
		return nil, &Error{Code: CodeStore, Detail: "creating the buckets", Err: err}
	}
	return &Store{db: db, changed: make(chan struct{})}, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Changed returns a channel closed at the next commit that added something.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Version counts the commits that added something since the store was opened.
func (s *Store) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

func (s *Store) notify() {
	s.mu.Lock()
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Offset is how far a source file was ingested: Bytes from its start, whose first bytes hash
// to Prefix (a file rewritten under the same name no longer matches and is read again).
type Offset struct {
	Bytes  int64
	Prefix [32]byte
}

// Offset returns the recorded offset of src.
func (s *Store) Offset(src string) (Offset, error) {
	var o Offset
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bOffsets).Get([]byte(src))
		if len(v) == 40 {
			o.Bytes = int64(binary.BigEndian.Uint64(v))
			copy(o.Prefix[:], v[8:])
		}
		return nil
	})
	if err != nil {
		return o, &Error{Code: CodeStore, Detail: "reading an offset", Err: err}
	}
	return o, nil
}

// Ingest adds recs in one transaction; with src set it also records off as src's offset. It
// returns how many records were new (a record already ingested, from any source, is skipped)
// and the indexes in recs of the new ones that did not decode (counted, shown on the
// overview, otherwise skipped): a record is reported once, in the commit that counts it.
func (s *Store) Ingest(src string, off Offset, recs []Record) (added int, malformed []int, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		added, malformed = 0, nil
		w := &writer{tx: tx}
		for i, r := range recs {
			ok, bad, err := w.add(r)
			if err != nil {
				return err
			}
			if ok {
				added++
			}
			if bad {
				malformed = append(malformed, i)
			}
		}
		if len(malformed) > 0 {
			if err := addCount(tx.Bucket(bMeta), []byte("malformed"), int64(len(malformed))); err != nil {
				return err
			}
		}
		return putOffset(tx, src, off)
	})
	if err != nil {
		return 0, nil, &Error{Code: CodeStore, Detail: "ingesting", Err: err}
	}
	if added > 0 || len(malformed) > 0 {
		s.notify()
	}
	return added, malformed, nil
}

// SkipRecord counts one record of src that is not read (larger than MaxRecordBytes) and
// records off, past it, as src's offset, in one transaction: a restarted console neither
// reads it nor counts it again.
func (s *Store) SkipRecord(src string, off Offset) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := addCount(tx.Bucket(bMeta), []byte("skipped"), 1); err != nil {
			return err
		}
		return putOffset(tx, src, off)
	})
	if err != nil {
		return &Error{Code: CodeStore, Detail: "skipping a record", Err: err}
	}
	s.notify()
	return nil
}

// putOffset records off as src's offset; no source, no offset (a topic's batch).
func putOffset(tx *bolt.Tx, src string, off Offset) error {
	if src == "" {
		return nil
	}
	v := binary.BigEndian.AppendUint64(nil, uint64(off.Bytes))
	return tx.Bucket(bOffsets).Put([]byte(src), append(v, off.Prefix[:]...))
}

// writer adds records inside one transaction.
type writer struct{ tx *bolt.Tx }

// recordID names a record by its content: the same bytes from a file and a topic are one.
func recordID(r Record) []byte {
	h := sha256.New()
	h.Write([]byte{r.Kind.Code})
	h.Write(r.Data)
	return h.Sum(nil)[:16]
}

func (w *writer) add(r Record) (added, malformed bool, err error) {
	id := recordID(r)
	seen := w.tx.Bucket(bSeen)
	if seen.Get(id) != nil {
		return false, false, nil
	}
	if err := seen.Put(id, nil); err != nil {
		return false, false, err
	}
	switch r.Kind.Out {
	case records.OutIntent:
		err = w.intent(id, r.Data)
	case records.OutTrace:
		err = w.trace(id, r.Data)
	case records.OutFinal:
		err = w.final(id, r.Data)
	case records.OutSnapshot:
		err = w.snapshot(r.Data)
	case records.OutDeadLetter:
		err = w.deadLetter(id, r.Data)
	default:
		err = errMalformed
	}
	if err == errMalformed {
		return false, true, nil
	}
	return err == nil, false, err
}

// code is the store code of the kind tagged out.
func code(out int64) byte {
	k, _ := records.KindOf(out)
	return k.Code
}

// errMalformed marks a record that does not decode as its kind.
var errMalformed = &Error{Code: CodeInput, Detail: "a record does not decode"}

func decode(data []byte, m proto.Message) error {
	if proto.Unmarshal(data, m) != nil {
		return errMalformed
	}
	return nil
}

// lp is b prefixed by its length: keys are arbitrary bytes, so no separator would do.
func lp(b []byte) []byte { return append(binary.AppendUvarint(nil, uint64(len(b))), b...) }

func be(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func (w *writer) intent(id, data []byte) error {
	ti := &pb.ToolIntent{}
	if err := decode(data, ti); err != nil {
		return err
	}
	if ti.GetIntentId() == "" {
		return w.count(ti.GetCreatedAtMs(), cIntents, 1) // counted; nothing names it to list it by
	}
	b := w.tx.Bucket(bIntents)
	iid := storeKey([]byte(ti.GetIntentId()))
	if cur := b.Get(iid); cur != nil {
		old := &pb.ToolIntent{}
		if proto.Unmarshal(cur, old) == nil && old.GetAttempt() > ti.GetAttempt() {
			return w.count(ti.GetCreatedAtMs(), cIntents, 1)
		}
	}
	if err := b.Put(iid, data); err != nil {
		return err
	}
	key, err := w.key(ti.GetEntityKey())
	if err != nil {
		return err
	}
	if err := w.tx.Bucket(bByKey).Put(cat(lp(key), []byte{code(records.OutIntent)}, be(ti.GetCreatedAtMs()), iid), []byte(ti.GetIntentId())); err != nil {
		return err
	}
	if err := w.touch(key, func(*entity) {}); err != nil {
		return err
	}
	return w.count(ti.GetCreatedAtMs(), cIntents, 1)
}

func (w *writer) final(id, data []byte) error {
	f := &pb.FinalReply{}
	if err := decode(data, f); err != nil {
		return err
	}
	if err := w.tx.Bucket(bFinals).Put(id, data); err != nil {
		return err
	}
	key, err := w.key(f.GetEntityKey())
	if err != nil {
		return err
	}
	if err := w.tx.Bucket(bByKey).Put(cat(lp(key), []byte{code(records.OutFinal)}, be(f.GetCreatedAtMs()), id), id); err != nil {
		return err
	}
	if err := w.touch(key, func(e *entity) { e.Finals++ }); err != nil {
		return err
	}
	return w.count(f.GetCreatedAtMs(), cFinals, 1)
}

func (w *writer) snapshot(data []byte) error {
	snap := &pb.StateSnapshot{}
	if err := decode(data, snap); err != nil {
		return err
	}
	b := w.tx.Bucket(bSnaps)
	if len(snap.GetEntityKey()) == 0 {
		return nil // no entity page to show it on
	}
	key, err := w.key(snap.GetEntityKey())
	if err != nil {
		return err
	}
	if cur := b.Get(key); cur != nil {
		old := &pb.StateSnapshot{}
		if proto.Unmarshal(cur, old) == nil && (old.GetSeq() > snap.GetSeq() || old.GetSeq() == snap.GetSeq() && old.GetSnapshotAtMs() > snap.GetSnapshotAtMs()) {
			return nil
		}
	}
	if err := b.Put(key, data); err != nil {
		return err
	}
	return w.touch(key, func(*entity) {})
}

func (w *writer) deadLetter(id, data []byte) error {
	d := &pb.ActivationErrorRecord{}
	if err := decode(data, d); err != nil {
		return err
	}
	t := d.GetEventTimeMs()
	if err := w.tx.Bucket(bDead).Put(id, data); err != nil {
		return err
	}
	if err := w.tx.Bucket(bDeadIdx).Put(cat(lp(storeKey([]byte(d.GetReason()))), be(t), id), nil); err != nil {
		return err
	}
	if err := addReason(w.tx.Bucket(bReasons), d.GetReason()); err != nil {
		return err
	}
	if len(d.GetEntityKey()) > 0 {
		key, err := w.key(d.GetEntityKey())
		if err != nil {
			return err
		}
		if err := w.tx.Bucket(bByKey).Put(cat(lp(key), []byte{code(records.OutDeadLetter)}, be(t), id), id); err != nil {
			return err
		}
		if err := w.touch(key, func(e *entity) { e.DeadLetters++; e.LastReason = cut(d.GetReason(), maxShown) }); err != nil {
			return err
		}
	}
	return w.count(t, cDead, 1)
}

func (w *writer) trace(id, data []byte) error {
	ev := &pb.TraceEvent{}
	if err := decode(data, ev); err != nil {
		return err
	}
	tid := storeKey(ev.GetTraceId())
	if err := w.tx.Bucket(bTraces).Put(cat(tid, be(ev.GetStartMs()), id), data); err != nil {
		return err
	}
	key, err := w.key(ev.GetEntityKey())
	if err != nil {
		return err
	}
	if err := w.tx.Bucket(bActs).Put(cat(lp(key), be(ev.GetSeq())), tid); err != nil {
		return err
	}
	attrs := ev.GetAttributes()
	at := ev.GetStartMs()
	switch ev.GetEventType() {
	case pb.TraceEvent_ACTIVATION_START:
		// The overview counts attempts an envelope drove (as a run counts activations, less
		// those that failed: they are dead letters); the entity its activations.
		switch attrs[tracing.AttrActivationKind] {
		case tracing.KindTimer:
			return nil
		case tracing.KindExternalEvent:
			if err := w.touch(key, func(e *entity) { e.Activations++ }); err != nil {
				return err
			}
		}
		return w.count(at, cActivations, 1)
	case pb.TraceEvent_LLM_CALL:
		in, _ := strconv.ParseInt(attrs[tracing.AttrInputTokens], 10, 64)
		out, _ := strconv.ParseInt(attrs[tracing.AttrOutputTokens], 10, 64)
		if err := w.count(at, cModelCalls, 1); err != nil {
			return err
		}
		return w.count(at, cTokens, in+out)
	case pb.TraceEvent_INTENT_EMITTED:
		return w.emitted(ev)
	case pb.TraceEvent_SUSPENDED:
		return w.touch(key, func(e *entity) {
			if later(ev.GetSeq(), at, e.SuspSeq, e.SuspMs) {
				e.SuspSeq, e.SuspMs, e.SuspIntent = ev.GetSeq(), at, attrs[tracing.AttrIntentID]
				e.SuspDeadline, _ = strconv.ParseInt(attrs[tracing.AttrDeadline], 10, 64)
			}
		})
	case pb.TraceEvent_ACTIVATION_END:
		return w.end(key, ev.GetSeq(), at, attrs[tracing.AttrActivationStatus])
	}
	return nil
}

// later orders events of a key by (seq, event time).
func later(seq, ms, curSeq, curMs int64) bool {
	return seq > curSeq || seq == curSeq && ms >= curMs
}

// end records an attempt's end status; at one instant an ending status outranks a suspension.
// key is the stored form.
func (w *writer) end(key []byte, seq, at int64, status string) error {
	var suspended bool
	err := w.touch(key, func(e *entity) {
		if e.Status == "" || later(seq, at, e.EndSeq, e.EndMs) && !(seq == e.EndSeq && at == e.EndMs && status == tracing.StatusSuspended) {
			e.EndSeq, e.EndMs, e.Status = seq, at, status
		}
		suspended = e.Status == tracing.StatusSuspended
	})
	if err != nil || len(key) == 0 {
		return err
	}
	if suspended {
		return w.tx.Bucket(bSuspended).Put(key, nil)
	}
	return w.tx.Bucket(bSuspended).Delete(key)
}

// emitted keeps what an INTENT_EMITTED event says of its intent, for keys whose intents
// output is not ingested.
func (w *writer) emitted(ev *pb.TraceEvent) error {
	a := ev.GetAttributes()
	id := a[tracing.AttrIntentID]
	if id == "" {
		return nil
	}
	exp, _ := strconv.ParseInt(a[tracing.AttrExpiresAt], 10, 64)
	attempts, _ := strconv.ParseUint(a[tracing.AttrAttempts], 10, 32)
	ti := &pb.ToolIntent{
		IntentId: id, EntityKey: ev.GetEntityKey(), Seq: ev.GetSeq(), StepIndex: ev.GetStepIndex(),
		ToolName: a[tracing.AttrToolName], CreatedAtMs: ev.GetStartMs(), ExpiresAtMs: exp, TraceId: ev.GetTraceId(),
		Kind: pb.ToolIntent_Kind(pb.ToolIntent_Kind_value[a[tracing.AttrIntentKind]]),
	}
	if attempts > 0 {
		ti.Attempt = uint32(attempts - 1)
	}
	b := w.tx.Bucket(bEmitted)
	if cur := b.Get(storeKey([]byte(id))); cur != nil {
		old := &pb.ToolIntent{}
		if proto.Unmarshal(cur, old) == nil && old.GetAttempt() >= ti.GetAttempt() {
			return nil
		}
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(ti)
	if err != nil {
		return err
	}
	return b.Put(storeKey([]byte(id)), data)
}

// entity is what the store keeps of one key between pages.
type entity struct {
	Activations int64  `json:"activations,omitempty"`
	Finals      int64  `json:"finals,omitempty"`
	DeadLetters int64  `json:"dead_letters,omitempty"`
	LastReason  string `json:"last_reason,omitempty"`
	// The latest ACTIVATION_END: its activation, time and status.
	EndSeq int64  `json:"end_seq,omitempty"`
	EndMs  int64  `json:"end_ms,omitempty"`
	Status string `json:"status,omitempty"`
	// The latest SUSPENDED event: its activation, time, intent and deadline.
	SuspSeq      int64  `json:"susp_seq,omitempty"`
	SuspMs       int64  `json:"susp_ms,omitempty"`
	SuspIntent   string `json:"susp_intent,omitempty"`
	SuspDeadline int64  `json:"susp_deadline,omitempty"`
}

// suspendedOn is the intent the key waits for, when its latest attempt suspended it.
func (e *entity) suspendedOn() string {
	if e.Status == tracing.StatusSuspended && e.SuspSeq == e.EndSeq && e.SuspMs == e.EndMs {
		return e.SuspIntent
	}
	return ""
}

// reasonKey is a reason's key in its bucket (bbolt refuses an empty key; a reason may be).
func reasonKey(reason string) []byte { return append([]byte{'r'}, storeKey([]byte(reason))...) }

// addReason counts one dead letter of reason; the count's value keeps a long reason whole.
func addReason(b *bolt.Bucket, reason string) error {
	k := reasonKey(reason)
	var cur int64
	if v := b.Get(k); len(v) >= 8 {
		cur = int64(binary.BigEndian.Uint64(v))
	}
	v := be(cur + 1)
	if hashed(k[1:]) {
		v = append(v, reason...)
	}
	return b.Put(k, v)
}

// reasonOf is the reason of a count in the reasons bucket.
func reasonOf(k, v []byte) string {
	if len(v) > 8 {
		return string(v[8:])
	}
	return string(k[1:])
}

// touch updates the entity of key, a stored form. The empty key has no entity page (bbolt
// refuses an empty key): its records are still counted and listed.
func (w *writer) touch(key []byte, f func(*entity)) error {
	if len(key) == 0 {
		return nil
	}
	b := w.tx.Bucket(bEntities)
	e := &entity{}
	if cur := b.Get(key); cur != nil {
		json.Unmarshal(cur, e)
	}
	f(e)
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return b.Put(key, v)
}

// Counters of one event-time minute.
const (
	cActivations = iota
	cModelCalls
	cTokens
	cIntents
	cFinals
	cDead
	nCounters
)

type counters [nCounters]int64

func (c *counters) decode(v []byte) {
	for i := range c {
		if len(v) >= (i+1)*8 {
			c[i] = int64(binary.BigEndian.Uint64(v[i*8:]))
		}
	}
}

func (c *counters) encode() []byte {
	out := make([]byte, 0, nCounters*8)
	for _, v := range c {
		out = binary.BigEndian.AppendUint64(out, uint64(v))
	}
	return out
}

func (w *writer) count(atMs int64, which int, n int64) error {
	b := w.tx.Bucket(bMinutes)
	k := be(max(atMs, 0) / 60_000)
	var c counters
	c.decode(b.Get(k))
	c[which] += n
	return b.Put(k, c.encode())
}

func addCount(b *bolt.Bucket, k []byte, n int64) error {
	var cur int64
	if v := b.Get(k); len(v) == 8 {
		cur = int64(binary.BigEndian.Uint64(v))
	}
	return b.Put(k, be(cur+n))
}
