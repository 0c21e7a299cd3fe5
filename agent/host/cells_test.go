package host_test

import (
	"slices"
	"testing"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// Every cell of Cells has its own field of AgentStateCells; an id that is no cell has none.
func TestCellsHaveFields(t *testing.T) {
	cells := host.Cells()
	if !slices.Contains(cells, host.CellInbox) || !slices.Contains(cells, statecodec.CellLLMCache) {
		t.Fatalf("Cells() = %v", cells)
	}
	m := &pb.AgentStateCells{}
	seen := map[*[]byte]statecodec.Cell{}
	for _, id := range cells {
		f := host.CellField(m, id)
		if f == nil {
			t.Fatalf("cell %s has no field", id)
		}
		if other, dup := seen[f]; dup {
			t.Fatalf("cells %s and %s share a field", other, id)
		}
		seen[f] = id
	}
	if f := host.CellField(m, "order_buffer.v1"); f != nil {
		t.Fatal("an id that is no cell has a field")
	}
}
