package statedir

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/registry"
)

// A Capture collects the state of every live key of a run, in the process that runs its
// workers. RunAgent finds it by id (transforms.Options.Capture): it records a key when the
// key's state is left without a timer that would bring it back (a restore, a firing that
// leaves nothing armed), and, once the Capture is frozen, at every firing instead of running
// it, so the drain's end-of-time watermark records each key as it was instead of failing its
// suspension closed.
type Capture struct {
	id     string
	frozen atomic.Bool

	mu   sync.Mutex
	keys map[string]Record
}

// A Record is one key's state: its snapshot and the envelopes it had not run yet, binary.
type Record struct {
	Snapshot  *pb.StateSnapshot
	Envelopes [][]byte
}

var captures registry.Registry[*Capture]

// NewCapture registers a new, empty Capture; Close unregisters it.
func NewCapture() *Capture {
	c := &Capture{keys: map[string]Record{}}
	c.id = captures.Add(c)
	return c
}

// Lookup returns the Capture registered under id in this process, nil for none (an empty
// id, or a worker in another process).
func Lookup(id string) *Capture {
	c, _ := captures.Lookup(id)
	return c
}

// ID is what transforms.Options.Capture takes.
func (c *Capture) ID() string { return c.id }

// Close unregisters the Capture.
func (c *Capture) Close() { captures.Remove(c.id) }

// Freeze makes every later firing of RunAgent record its key instead of running.
func (c *Capture) Freeze() { c.frozen.Store(true) }

// Frozen reports whether Freeze was called.
func (c *Capture) Frozen() bool { return c.frozen.Load() }

// Put records key's state, replacing what was recorded for it. Put keeps its arguments.
func (c *Capture) Put(key []byte, r Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys[string(key)] = r
}

// Len is the number of keys recorded.
func (c *Capture) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.keys)
}

// records returns the records in key order.
func (c *Capture) records() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.keys))
	for k := range c.keys {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return bytes.Compare([]byte(a), []byte(b)) })
	out := make([]Record, len(keys))
	for i, k := range keys {
		out[i] = c.keys[k]
	}
	return out
}
