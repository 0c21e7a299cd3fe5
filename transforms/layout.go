package transforms

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// A layout maps the core's logical cells onto Beam value-state cells.
type layout interface {
	read(sp state.Provider, cell statecodec.Cell) ([]byte, error)
	// write commits the changed cells (an empty value clears one) and reports the Beam state
	// writes it made and their bytes.
	write(sp state.Provider, changed map[statecodec.Cell][]byte) (writes, bytes int, err error)
	// reads reports the Beam state reads made so far.
	reads() int
}

// combined keeps every cell of a key in the one Beam cell "agent_state.v1"
// (AgentStateCells): one read and at most one write per firing.
type combined struct {
	cell   *state.Value[[]byte]
	cells  *pb.AgentStateCells
	loaded bool
	nreads int
}

func (l *combined) load(sp state.Provider) error {
	if l.loaded {
		return nil
	}
	b, _, err := l.cell.Read(sp)
	if err != nil {
		return err
	}
	l.nreads++
	l.cells = &pb.AgentStateCells{}
	if err := proto.Unmarshal(b, l.cells); err != nil {
		return &statecodec.Error{Code: statecodec.CodeCorrupt, Cell: "agent_state.v1", Err: err}
	}
	l.loaded = true
	return nil
}

func (l *combined) read(sp state.Provider, cell statecodec.Cell) ([]byte, error) {
	if err := l.load(sp); err != nil {
		return nil, err
	}
	f := combinedField(l.cells, cell)
	if f == nil {
		return nil, fmt.Errorf("unknown cell %s", cell)
	}
	return *f, nil
}

func (l *combined) write(sp state.Provider, changed map[statecodec.Cell][]byte) (int, int, error) {
	if len(changed) == 0 {
		return 0, 0, nil
	}
	if err := l.load(sp); err != nil {
		return 0, 0, err
	}
	for cell, b := range changed {
		*combinedField(l.cells, cell) = b
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(l.cells)
	if err != nil {
		return 0, 0, err
	}
	if len(b) == 0 {
		return 1, 0, l.cell.Clear(sp)
	}
	return 1, len(b), l.cell.Write(sp, b)
}

func (l *combined) reads() int { return l.nreads }

func combinedField(c *pb.AgentStateCells, cell statecodec.Cell) *[]byte {
	switch cell {
	case statecodec.CellSeq:
		return &c.Seq
	case statecodec.CellMemory:
		return &c.Memory
	case statecodec.CellLLMCache:
		return &c.LlmCache
	case statecodec.CellContinuation:
		return &c.Continuation
	case statecodec.CellPending:
		return &c.Pending
	case agent.CellInbox:
		return &c.Inbox
	}
	return nil
}

// separate keeps each cell in its own Beam cell, named by its cell id.
type separate struct {
	cells  map[statecodec.Cell]*state.Value[[]byte]
	nreads int
}

func (l *separate) read(sp state.Provider, cell statecodec.Cell) ([]byte, error) {
	c, ok := l.cells[cell]
	if !ok {
		return nil, fmt.Errorf("unknown cell %s", cell)
	}
	l.nreads++
	b, _, err := c.Read(sp)
	return b, err
}

func (l *separate) write(sp state.Provider, changed map[statecodec.Cell][]byte) (writes, n int, err error) {
	for _, cell := range agent.Cells() {
		b, ok := changed[cell]
		if !ok {
			continue
		}
		writes++
		n += len(b)
		if len(b) == 0 {
			err = l.cells[cell].Clear(sp)
		} else {
			err = l.cells[cell].Write(sp, b)
		}
		if err != nil {
			return writes, n, err
		}
	}
	return writes, n, nil
}

func (l *separate) reads() int { return l.nreads }

// store is the agent.Store of one firing: reads go through the layout once per cell, and
// the writes of successive activations accumulate until the firing flushes them.
type store struct {
	sp      state.Provider
	layout  layout
	read    map[statecodec.Cell][]byte
	changed map[statecodec.Cell][]byte
}

func newStore(sp state.Provider, l layout) *store {
	return &store{sp: sp, layout: l, read: map[statecodec.Cell][]byte{}, changed: map[statecodec.Cell][]byte{}}
}

func (s *store) Read(cell statecodec.Cell) ([]byte, error) {
	if b, ok := s.changed[cell]; ok {
		return b, nil
	}
	if b, ok := s.read[cell]; ok {
		return b, nil
	}
	b, err := s.layout.read(s.sp, cell)
	if err != nil {
		return nil, err
	}
	s.read[cell] = b
	return b, nil
}

func (s *store) apply(r *agent.Result) {
	for cell, b := range r.Writes {
		s.changed[cell] = b
	}
}

func (s *store) flush() (writes, bytes int, err error) { return s.layout.write(s.sp, s.changed) }
