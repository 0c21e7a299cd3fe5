package agent

import (
	"errors"
	"math/bits"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

// CellInbox is the state id of the inbox cell: external events that arrived while the key was
// suspended, encoded as beam_agents.v1.AgentInbox. Like statecodec's ids it is stable API.
const CellInbox statecodec.Cell = "inbox.v1"

// cell is one of a key's state cells, by its position in cellTable.
type cell uint8

const (
	seqCell cell = iota
	memoryCell
	cacheCell
	contCell
	pendingCell
	inboxCell
	numCells
)

// cellTable is the one place that maps a cell to its state id, its codec and its field of
// AgentStateCells (the combined encoding of a key's cells). Its order is the order of Cells.
var cellTable = [numCells]struct {
	id     statecodec.Cell
	field  func(*pb.AgentStateCells) *[]byte
	decode func(v *view, b []byte) error
	encode func(v *view) ([]byte, error)
}{
	seqCell: {
		statecodec.CellSeq, func(m *pb.AgentStateCells) *[]byte { return &m.Seq },
		func(v *view, b []byte) (err error) { v.seq, err = statecodec.DecodeSeq(b); return err },
		func(v *view) ([]byte, error) { return statecodec.EncodeSeq(v.seq) },
	},
	memoryCell: {
		statecodec.CellMemory, func(m *pb.AgentStateCells) *[]byte { return &m.Memory },
		func(v *view, b []byte) (err error) { v.memory, err = statecodec.DecodeMemory(b, v.mopts); return err },
		func(v *view) ([]byte, error) { return v.memory.Encode() },
	},
	cacheCell: {
		statecodec.CellLLMCache, func(m *pb.AgentStateCells) *[]byte { return &m.LlmCache },
		func(v *view, b []byte) (err error) { v.cache, err = statecodec.DecodeCache(b, v.copts); return err },
		func(v *view) ([]byte, error) { return v.cache.Encode() },
	},
	contCell: {
		statecodec.CellContinuation, func(m *pb.AgentStateCells) *[]byte { return &m.Continuation },
		func(v *view, b []byte) (err error) { v.cont, err = v.contOpts().Decode(b); return err },
		func(v *view) ([]byte, error) { return v.cont.Encode() }, // nil (not suspended) clears the cell
	},
	pendingCell: {
		statecodec.CellPending, func(m *pb.AgentStateCells) *[]byte { return &m.Pending },
		func(v *view, b []byte) (err error) { v.pending, err = statecodec.DecodePending(b); return err },
		func(v *view) ([]byte, error) { return v.pending.Encode() },
	},
	inboxCell: {
		CellInbox, func(m *pb.AgentStateCells) *[]byte { return &m.Inbox },
		func(v *view, b []byte) error {
			v.inbox = &pb.AgentInbox{}
			if err := proto.Unmarshal(b, v.inbox); err != nil {
				return &statecodec.Error{Code: statecodec.CodeCorrupt, Cell: CellInbox, Err: err}
			}
			return nil
		},
		func(v *view) ([]byte, error) {
			if len(v.inbox.GetEnvelopes()) == 0 {
				return nil, nil
			}
			return proto.MarshalOptions{Deterministic: true}.Marshal(v.inbox)
		},
	},
}

func (c cell) String() string { return string(cellTable[c].id) }

func cellOf(id statecodec.Cell) (cell, bool) {
	for c := range numCells {
		if cellTable[c].id == id {
			return c, true
		}
	}
	return 0, false
}

// Cells lists every state cell an agent uses, in a fixed order.
func Cells() []statecodec.Cell {
	ids := make([]statecodec.Cell, numCells)
	for c := range numCells {
		ids[c] = cellTable[c].id
	}
	return ids
}

// CellField returns the field of m, the combined encoding of a key's cells, that holds cell
// id; nil for an id that is not one of Cells.
func CellField(m *pb.AgentStateCells, id statecodec.Cell) *[]byte {
	if c, ok := cellOf(id); ok {
		return cellTable[c].field(m)
	}
	return nil
}

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
// empty value clears the cell); a failed activation contributes no writes and one dead letter
// (with the ERROR trace events of model calls a circuit breaker refused).
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

// cells is the state of one key as seen by a call: committed bytes (each read at most once),
// overlaid with what the call's successful activations wrote.
type cells struct {
	batch   *Batch
	overlay [numCells][]byte
	wrote   cellSet
	read    cellSet
	reads   []statecodec.Cell
	readBuf [numCells]statecodec.Cell // reads' backing array: a call reads each cell at most once
	// liveVals are decoded values of written cells (see liveCells).
	liveVals liveCells
}

func (cs *cells) committed(c cell) ([]byte, error) {
	if cs.wrote.has(c) {
		err := cs.liveVals.materialize(c, &cs.overlay[c])
		return cs.overlay[c], err
	}
	return cs.initial(c)
}

// initial returns the cell as it was before the call.
func (cs *cells) initial(c cell) ([]byte, error) {
	b, err := cs.batch.committed(c)
	if err == nil {
		cs.noteRead(c)
	}
	return b, err
}

func (cs *cells) write(c cell, b []byte) {
	cs.overlay[c] = b
	cs.wrote = cs.wrote.with(c)
	cs.liveVals.drop(c)
}

// writes returns the call's writes by state id, nil when it wrote nothing or when its batch
// defers encoding.
func (cs *cells) writes() map[statecodec.Cell][]byte {
	if cs.batch.deferred {
		return nil
	}
	return byID(&cs.overlay, cs.wrote)
}

// byID returns the cells of set, by state id; nil for an empty set.
func byID(vals *[numCells][]byte, set cellSet) map[statecodec.Cell][]byte {
	if set == 0 {
		return nil
	}
	m := make(map[statecodec.Cell][]byte, set.len())
	for c := range numCells {
		if set.has(c) {
			m[cellTable[c].id] = vals[c]
		}
	}
	return m
}

// view is the working copy of a key's cells during one activation: decoded lazily from the
// committed bytes, and encoded into the overlay only when the activation succeeds.
type view struct {
	cells *cells
	mopts statecodec.MemoryOptions
	copts statecodec.CacheOptions

	loaded, dirty, cleared cellSet
	memShared              bool // memory is the batch's kept value, read only (see ownMemory)

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

// contOpts are the continuation's codec options: every cell of an agent has the agent's one
// state schema, which agent.New put into the memory and cache options.
func (v *view) contOpts() statecodec.ContinuationOptions {
	return statecodec.ContinuationOptions{Schema: v.mopts.Schema}
}

func (v *view) raw(c cell) ([]byte, error) { return v.cells.committed(c) }

// load decodes cell c on first use.
func (v *view) load(c cell) error {
	if v.loaded.has(c) {
		return nil
	}
	if v.loadLive(c) {
		v.loaded = v.loaded.with(c)
		return nil
	}
	b, err := v.raw(c)
	if err != nil {
		return err
	}
	if err := cellTable[c].decode(v, b); err != nil {
		return stateErr(err)
	}
	v.keepDecoded(c)
	v.loaded = v.loaded.with(c)
	return nil
}

// stateErr maps a cell codec error to its dead-letter reason.
func stateErr(err error) error {
	if errors.Is(err, statecodec.ErrFutureVersion) {
		return &Error{Reason: records.ReasonStateVersionUnsupported, Err: err}
	}
	return &Error{Reason: records.ReasonStateCorrupt, Err: err}
}

func (v *view) need(cells ...cell) error {
	for _, c := range cells {
		if err := v.load(c); err != nil {
			return err
		}
	}
	return nil
}

func (v *view) touch(cells ...cell) {
	for _, c := range cells {
		v.dirty = v.dirty.with(c)
	}
}

// clear marks a cell to be written empty: "never written" again.
func (v *view) clear(c cell) {
	v.cleared = v.cleared.with(c)
	v.dirty = v.dirty.with(c)
}

// commit encodes the dirty cells into the overlay, all or nothing, and returns the codec
// stats. The decoded memory and cache become the values kept for the next inputs; with
// deferred encoding they are not encoded here.
func (v *view) commit() (statecodec.Stats, error) {
	var st statecodec.Stats
	var enc [numCells][]byte // written to the overlay only when all encode
	for c := range numCells {
		if !v.dirty.has(c) || v.cleared.has(c) || v.deferred(c) {
			continue
		}
		var err error
		if enc[c], err = cellTable[c].encode(v); err != nil {
			return st, &Error{Reason: records.ReasonStateCorrupt, Detail: "encoding " + c.String(), Err: err}
		}
	}
	for c := range numCells {
		if v.dirty.has(c) {
			v.cells.write(c, enc[c])
			if reusable(c) && !v.cleared.has(c) {
				v.cells.liveVals.set(c, v.value(c), v.deferred(c))
			}
		}
	}
	if v.memory != nil && !v.memShared { // a kept value's stats were added when it was committed
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

// cellSet is a set of cells: a bitmask over their position in cellTable.
type cellSet uint8

const _ cellSet = 1 << (numCells - 1) // every cell fits in a cellSet

func (s cellSet) has(c cell) bool     { return s&(1<<c) != 0 }
func (s cellSet) with(c cell) cellSet { return s | 1<<c }
func (s cellSet) len() int            { return bits.OnesCount8(uint8(s)) }
