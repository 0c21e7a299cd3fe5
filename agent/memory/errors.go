package memory

import "errors"

// The errors of a ring, each wrapped in the *agent.Error that fails the activation (errors.Is
// finds them through it).
var (
	// ErrDeclaration: the Ring or its Compactor is declared wrong (an empty name, Keep below
	// 1, a byte bound too small for the summary, a summary bound out of range). The
	// activation fails as internal_panic: it is a bug of the agent, not of its input.
	ErrDeclaration = errors.New("memory: invalid ring declaration")
	// ErrCorrupt: the ring's memory entry is a ring of Context.Append, or was written by
	// something else, not a compacted ring. The activation fails as state_corrupt.
	ErrCorrupt = errors.New("memory: the memory entry is not a compacted ring")
	// ErrTooLarge: the value cannot fit the ring's byte bound even with every other entry
	// compacted, beside the ring's summary (for Summarize, a summary of its largest size).
	// The activation fails as budget_exceeded.
	ErrTooLarge = errors.New("memory: the value does not fit the ring's byte bound")
)
