package agent

import (
	"errors"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// CellInbox is the state id of the inbox cell: external events that arrived while the key was
// suspended, encoded as beam_agents.v1.AgentInbox. Like statecodec's ids it is stable API.
const CellInbox statecodec.Cell = "inbox.v1"

// Cells lists every state cell an agent uses, in a fixed order.
func Cells() []statecodec.Cell { return slices.Clone(allCells) }

var allCells = append(statecodec.Cells(), CellInbox)

// Store gives the core read access to one key's committed state cells. Read returns the
// cell's bytes, empty for a cell never written. The core reads a cell only when the input
// needs it, at most once per call.
type Store interface {
	Read(cell statecodec.Cell) ([]byte, error)
}

// MapStore is a Store over a map, for tests and tools; Apply commits a Result's writes.
type MapStore map[statecodec.Cell][]byte

// Read returns the cell's bytes.
func (m MapStore) Read(c statecodec.Cell) ([]byte, error) { return m[c], nil }

// Apply writes r's cells: an empty value clears the cell.
func (m MapStore) Apply(r *Result) {
	for c, b := range r.Writes {
		if len(b) == 0 {
			delete(m, c)
			continue
		}
		m[c] = b
	}
}

// Timer tags of the key's single event-time timer family.
const (
	TagDeadline = "deadline" // the suspension's deadline (and its escalations)
	TagTTL      = "ttl"      // the idle-key garbage collection
)

// TimerOp sets or clears one tagged timer of the key.
type TimerOp struct {
	Tag  string
	Set  bool  // false clears the timer
	AtMs int64 // event time of the firing, when Set
}

// Outputs are an activation's emitted messages, in emission order.
type Outputs struct {
	Intents     []*pb.ToolIntent
	Traces      []*pb.TraceEvent
	Finals      []*pb.FinalReply
	Snapshots   []*pb.StateSnapshot
	DeadLetters []*pb.ActivationErrorRecord
}

// Result is what one call of the core decided. Writes holds only the cells that changed (an
// empty value clears the cell); a failed activation contributes no writes and one dead letter.
type Result struct {
	Outputs
	Writes map[statecodec.Cell][]byte
	Timers []TimerOp
	// Reads lists the cells the call read, in order; ModelCalls counts calls that reached the
	// model (cache hits excluded); Stats sums what the cell codecs repaired and evicted.
	Reads      []statecodec.Cell
	ModelCalls int
	Stats      statecodec.Stats
}

// cells is the committed state of one key during a call: the store's bytes, each read at most
// once, overlaid with what the call's successful activations wrote.
type cells struct {
	store   Store
	base    map[statecodec.Cell][]byte // bytes read from the store
	overlay map[statecodec.Cell][]byte // bytes written by committed activations
	reads   []statecodec.Cell
}

func newCells(store Store) *cells {
	return &cells{store: store, base: map[statecodec.Cell][]byte{}, overlay: map[statecodec.Cell][]byte{}}
}

func (cs *cells) committed(c statecodec.Cell) ([]byte, error) {
	if b, ok := cs.overlay[c]; ok {
		return b, nil
	}
	return cs.initial(c)
}

// initial returns the cell as the store had it before the call.
func (cs *cells) initial(c statecodec.Cell) ([]byte, error) {
	if b, ok := cs.base[c]; ok {
		return b, nil
	}
	b, err := cs.store.Read(c)
	if err != nil {
		return nil, &Error{Reason: ReasonStateCorrupt, Detail: "reading " + string(c), Err: err}
	}
	cs.base[c] = b
	cs.reads = append(cs.reads, c)
	return b, nil
}

// view is the working copy of a key's cells during one activation: decoded lazily from the
// committed bytes, and encoded into the overlay only when the activation succeeds.
type view struct {
	cells *cells
	mopts statecodec.MemoryOptions
	copts statecodec.CacheOptions

	loaded, dirty, cleared cellSet

	seq     int64
	memory  *statecodec.Memory
	cache   *statecodec.Cache
	cont    *statecodec.Continuation // nil: not suspended
	pending *statecodec.Pending
	inbox   *pb.AgentInbox
}

func newView(cs *cells, l Limits) *view {
	return &view{cells: cs, mopts: l.Memory, copts: l.Cache}
}

func (v *view) raw(c statecodec.Cell) ([]byte, error) { return v.cells.committed(c) }

// load decodes cell c on first use.
func (v *view) load(c statecodec.Cell) error {
	if v.loaded.has(c) {
		return nil
	}
	b, err := v.raw(c)
	if err != nil {
		return err
	}
	switch c {
	case statecodec.CellSeq:
		v.seq, err = statecodec.DecodeSeq(b)
	case statecodec.CellMemory:
		v.memory, err = statecodec.DecodeMemory(b, v.mopts)
	case statecodec.CellLLMCache:
		v.cache, err = statecodec.DecodeCache(b, v.copts)
	case statecodec.CellContinuation:
		v.cont, err = statecodec.DecodeContinuation(b)
	case statecodec.CellPending:
		v.pending, err = statecodec.DecodePending(b)
	case CellInbox:
		v.inbox = &pb.AgentInbox{}
		if uerr := proto.Unmarshal(b, v.inbox); uerr != nil {
			err = &statecodec.Error{Code: statecodec.CodeCorrupt, Cell: CellInbox, Err: uerr}
		}
	}
	if err != nil {
		return stateErr(err)
	}
	v.loaded = v.loaded.with(c)
	return nil
}

// stateErr maps a cell codec error to its dead-letter reason.
func stateErr(err error) error {
	if errors.Is(err, statecodec.ErrFutureVersion) {
		return &Error{Reason: ReasonStateVersionUnsupported, Err: err}
	}
	return &Error{Reason: ReasonStateCorrupt, Err: err}
}

func (v *view) need(cells ...statecodec.Cell) error {
	for _, c := range cells {
		if err := v.load(c); err != nil {
			return err
		}
	}
	return nil
}

func (v *view) touch(cells ...statecodec.Cell) {
	for _, c := range cells {
		v.dirty = v.dirty.with(c)
	}
}

// clear marks a cell to be written empty: "never written" again.
func (v *view) clear(c statecodec.Cell) {
	v.cleared = v.cleared.with(c)
	v.dirty = v.dirty.with(c)
}

// commit encodes the dirty cells into the overlay, all or nothing, and returns the codec
// stats.
func (v *view) commit() (statecodec.Stats, error) {
	var st statecodec.Stats
	var enc [6][]byte // by position in allCells; written to the overlay only when all encode
	for i, c := range allCells {
		if !v.dirty.has(c) || v.cleared.has(c) {
			continue
		}
		var err error
		if enc[i], err = v.encode(c); err != nil {
			return st, &Error{Reason: ReasonStateCorrupt, Detail: "encoding " + string(c), Err: err}
		}
	}
	for i, c := range allCells {
		if v.dirty.has(c) {
			v.cells.overlay[c] = enc[i]
		}
	}
	if v.memory != nil {
		st.Add(v.memory.Stats())
	}
	if v.cache != nil {
		st.Add(v.cache.Stats())
	}
	if v.cont != nil {
		st.Add(v.cont.Stats())
	}
	if v.pending != nil {
		st.Add(v.pending.Stats())
	}
	return st, nil
}

func (v *view) encode(c statecodec.Cell) ([]byte, error) {
	switch c {
	case statecodec.CellSeq:
		return statecodec.EncodeSeq(v.seq)
	case statecodec.CellMemory:
		return v.memory.Encode()
	case statecodec.CellLLMCache:
		return v.cache.Encode()
	case statecodec.CellContinuation:
		if v.cont == nil {
			return nil, nil
		}
		return v.cont.Encode()
	case statecodec.CellPending:
		return v.pending.Encode()
	case CellInbox:
		if len(v.inbox.GetEnvelopes()) == 0 {
			return nil, nil
		}
		return proto.MarshalOptions{Deterministic: true}.Marshal(v.inbox)
	}
	return nil, errors.New("unknown cell " + string(c))
}

// cellSet is a set of cells: a bitmask over their position in Cells().
type cellSet uint8

func cellBit(c statecodec.Cell) cellSet {
	switch c {
	case statecodec.CellSeq:
		return 1 << 0
	case statecodec.CellMemory:
		return 1 << 1
	case statecodec.CellLLMCache:
		return 1 << 2
	case statecodec.CellContinuation:
		return 1 << 3
	case statecodec.CellPending:
		return 1 << 4
	case CellInbox:
		return 1 << 5
	}
	panic("agent: unknown cell " + string(c))
}

func (s cellSet) has(c statecodec.Cell) bool     { return s&cellBit(c) != 0 }
func (s cellSet) with(c statecodec.Cell) cellSet { return s | cellBit(c) }
