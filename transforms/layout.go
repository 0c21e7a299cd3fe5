package transforms

import (
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/state"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// A layout maps the core's logical cells onto Beam value-state cells. RunAgent uses combined;
// the throughput harness measures it against one Beam cell per logical cell.
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
	cell *state.Value[[]byte]
	// raw, when haveRaw is set, is the cell as already read: a step run apart from its
	// bundle reads nothing through Beam.
	raw     []byte
	haveRaw bool

	cells  *pb.AgentStateCells
	loaded bool
	nreads int
}

func (l *combined) load(sp state.Provider) error {
	if l.loaded {
		return nil
	}
	b := l.raw
	if !l.haveRaw {
		var err error
		if b, _, err = l.cell.Read(sp); err != nil {
			return err
		}
		l.nreads++
	}
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
	f := host.CellField(l.cells, cell)
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
		*host.CellField(l.cells, cell) = b
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(l.cells)
	if err != nil {
		return 0, 0, err
	}
	l.raw, l.haveRaw = b, true
	if len(b) == 0 {
		return 1, 0, l.cell.Clear(sp)
	}
	return 1, len(b), l.cell.Write(sp, b)
}

func (l *combined) reads() int { return l.nreads }

// layoutStore is the host.Store of one firing over a layout.
type layoutStore struct {
	sp     state.Provider
	layout layout
}

func (s layoutStore) Read(cell statecodec.Cell) ([]byte, error) { return s.layout.read(s.sp, cell) }
