package transforms

// Ordering says in which order RunAgent hands a key's envelopes to the activation core.
type Ordering string

// Orderings.
const (
	// EventTimeOrder buffers each envelope in keyed state until the watermark passes its event
	// time (rounded up to OrderResolutionMs), then processes the due envelopes in event-time
	// order, ties broken by their bytes, with the key's deadline and TTL timers fired in event
	// time between them (package agent/drive specifies it). The order is the same on every
	// run and runner.
	EventTimeOrder Ordering = "event_time"
	// ArrivalOrder processes each envelope when it arrives: cheaper, but Beam does not order a
	// key's elements, so only sources that already deliver a key in order should use it.
	ArrivalOrder Ordering = "arrival"
)
