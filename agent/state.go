package agent

import (
	"errors"
	"math/bits"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

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
// AgentStateCells (the combined encoding of a key's cells). Its order is the order of cellIDs.
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
		hostapi.CellInbox, func(m *pb.AgentStateCells) *[]byte { return &m.Inbox },
		func(v *view, b []byte) error {
			v.inbox = &pb.AgentInbox{}
			if err := proto.Unmarshal(b, v.inbox); err != nil {
				return &statecodec.Error{Code: statecodec.CodeCorrupt, Cell: hostapi.CellInbox, Err: err}
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

// cellIDs lists every state cell an agent uses, in a fixed order (host.Cells).
func cellIDs() []statecodec.Cell {
	ids := make([]statecodec.Cell, numCells)
	for c := range numCells {
		ids[c] = cellTable[c].id
	}
	return ids
}

// cellField returns the field of m, the combined encoding of a key's cells, that holds cell
// id; nil for an id that is not one of cellIDs (host.CellField).
func cellField(m *pb.AgentStateCells, id statecodec.Cell) *[]byte {
	if c, ok := cellOf(id); ok {
		return cellTable[c].field(m)
	}
	return nil
}

// cells is the state of one key as seen by a call: committed bytes (each read at most once),
// overlaid with what the call's successful activations wrote.
type cells struct {
	batch   *batch
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
