package agent

import (
	"github.com/beamagents/beamagents/agent/internal/hostapi"
	"github.com/beamagents/beamagents/canary"
)

// Package agent/host is the shells' API of the core; it imports this package, so this package
// lends it, once, the entry points that need an Agent's internals.
func init() {
	hostapi.Lend(&hostapi.Core[*Agent]{
		NewBatch: func(a *Agent, store hostapi.Store, deps hostapi.Deps) hostapi.Batch {
			return a.newBatch(store, deps)
		},
		DeadLetter: deadLetterOf,
		Cells:      cellIDs,
		CellField:  cellField,
		WithCanary: func(a, candidate *Agent, slice canary.Slice) (*Agent, error) { return a.withCanary(candidate, slice) },
	})
}
