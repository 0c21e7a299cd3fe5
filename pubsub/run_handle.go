package pubsub

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/beamagents/beamagents/internal/registry"
)

// A Run connects a running pipeline's Pub/Sub steps to the process that started it: the
// steps count what they do into it, and Drain tells the source to stop pulling. It works when
// the workers run in the launching process (Prism, and any portable runner in LOOPBACK mode);
// elsewhere the steps find no Run and only update their Beam counters.
type Run struct {
	id      string
	drain   atomic.Bool
	drained chan struct{}
	once    sync.Once

	in, rejected, duplicates, activations, intents, deadLetters, published atomic.Int64
	watermarkMs                                                            atomic.Int64
}

var runs registry.Registry[*Run]

// NewRun registers a new Run; Close unregisters it.
func NewRun() *Run {
	r := &Run{drained: make(chan struct{})}
	r.id = runs.Add(r)
	return r
}

func lookupRun(id string) *Run {
	r, _ := runs.Lookup(id)
	return r
}

// ID is what Options.Run takes.
func (r *Run) ID() string { return r.id }

// Close unregisters the Run.
func (r *Run) Close() { runs.Remove(r.id) }

// Drain tells the source to stop pulling: it finishes the batch it holds and returns, its
// last bundle's messages are acknowledged when that bundle commits, and the pipeline then
// finishes as a bounded one does (the watermark reaches the end of time, so event-time
// timers fire).
func (r *Run) Drain() { r.once.Do(func() { r.drain.Store(true); close(r.drained) }) }

// Draining reports whether Drain was called.
func (r *Run) Draining() bool { return r.drain.Load() }

// Status is a snapshot of a Run's counts.
type Status struct {
	EnvelopesIn, Rejected, Duplicates, Activations, IntentsOut, DeadLetters, Published int64
	// Watermark is the source's last reported watermark (zero before the first).
	Watermark time.Time
}

// Status returns the counts so far.
func (r *Run) Status() Status {
	s := Status{
		EnvelopesIn: r.in.Load(), Rejected: r.rejected.Load(), Duplicates: r.duplicates.Load(),
		Activations: r.activations.Load(), IntentsOut: r.intents.Load(), DeadLetters: r.deadLetters.Load(),
		Published: r.published.Load(),
	}
	if ms := r.watermarkMs.Load(); ms > 0 {
		s.Watermark = time.UnixMilli(ms)
	}
	return s
}

// add is nil-safe: steps on remote workers have no Run.
func add(r *Run, c func(*Run) *atomic.Int64, n int64) {
	if r != nil {
		c(r).Add(n)
	}
}
