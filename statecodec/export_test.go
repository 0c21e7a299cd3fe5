package statecodec

// ValidCacheKey is exported for the tests of package statecodec_test.
var ValidCacheKey = validCacheKey

// Cells lists the state ids of this package, in a fixed order (package agent's table lists
// them with its own cell).
func Cells() []Cell { return []Cell{CellSeq, CellMemory, CellLLMCache, CellContinuation, CellPending} }
