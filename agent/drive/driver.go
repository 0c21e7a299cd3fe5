package drive

import (
	"context"
	"maps"
	"slices"

	"github.com/beamagents/beamagents/agent/host"
)

// Driver runs keys in memory exactly as RunAgent runs them with event-time ordering, from
// the first input to the end of a bounded input (see the package documentation).
type Driver struct {
	Core
	// OutputsOnly skips the work that can change no output: a last firing of the idle TTL,
	// with nothing else armed and nothing buffered, only drops the key's memory and replay
	// cache (unless the agent flushes its memory at expiry: Agent.FlushesOnExpiry), and the
	// state at the end is never encoded. Stats.Cells is then empty.
	OutputsOnly bool
	// Observe, when set, sees every result of the core before its outputs are emitted (a
	// shell's metering); it must not change the result.
	Observe func(*host.Result)
}

// key is one key's in-memory image of RunAgent's Beam state: the committed cells, the
// content of the ordering buffer and the armed Beam timers.
//
// The cells live in one batch for the whole input, which keeps the decoded memory and replay
// cache between firings and encodes them once, at the end (host.Batch.DeferEncoding): every
// input is still atomic, and sees what the inputs before it committed, exactly as when each
// firing commits its own batch. The buffer is held decoded: the envelopes not yet due, sorted
// into processing order once (a firing at T takes the prefix with event time ≤ T, which is
// what splitBuffer would return, in the order sortDue gives), and the core timers, which are what
// the buffer's timer frames would hold after every firing (a firing rewrites them whenever
// they change).
type key struct {
	d       *Driver
	id      []byte
	cells   host.MapStore // the state before the first input: none
	batch   host.Batch
	pending []bufferedEnv // buffered envelopes
	sorted  bool          // pending is in processing order
	core    Timers        // the core timers in the buffer
	timers  []beamTimer   // armed, in the order they were set
	stats   Stats
}

// Stats are what a run of one key did.
type Stats struct {
	// Cells is the key's committed state at the end of input.
	Cells host.MapStore
	// Activations counts envelopes handed to the core; Firings, Beam timer firings; ModelCalls,
	// calls that reached the model (replay-cache hits excluded).
	Activations, Firings, ModelCalls int
}

type beamTimer struct {
	tag string
	at  int64
}

// Run runs one key over its input values (envelopes as DecodeEnvelopes emits them, restores
// as RestoreValue makes them, in arrival order) to the end of input and hands every output
// to emit as (kind, deterministic bytes), in emission order.
func (d *Driver) Run(ctx context.Context, id []byte, values [][]byte, emit func(kind int64, b []byte)) Stats {
	k := &key{d: d, id: id, cells: host.MapStore{}, core: Timers{}}
	k.batch = d.Batch(k.cells)
	k.batch.DeferEncoding()
	for _, v := range values {
		k.element(ctx, v, emit)
	}
	// A last idle firing of an agent that flushes its memory at expiry writes to the
	// long-term store: an effect, so it is never skipped.
	skipIdle := d.OutputsOnly && !d.Agent.FlushesOnExpiry()
	for len(k.timers) > 0 && !(skipIdle && k.onlyIdleLeft()) {
		k.fire(ctx, emit)
	}
	if !d.OutputsOnly {
		commit(k.cells, k.batch)
	}
	k.stats.Cells = k.cells
	return k.stats
}

// element is RunAgent's processing of one input value before the watermark moves: a restore
// is applied at once, an envelope waits in the buffer for the watermark to pass its bucket.
func (k *key) element(ctx context.Context, value []byte, emit func(int64, []byte)) {
	e := k.d.Step(ctx, k.batch, k.id, Trigger{Value: value}, nil)
	if e.Buffer != nil {
		k.pending, k.sorted = append(k.pending, *e.Buffer), false
	}
	maps.Copy(k.core, e.ArmTimers) // a later timer frame overrides an earlier one
	k.apply(&e, emit)
}

// fire fires the earliest Beam timer (ties in the order they were set) as RunAgent's OnTimer.
func (k *key) fire(ctx context.Context, emit func(int64, []byte)) {
	i := 0
	for j, t := range k.timers {
		if t.at < k.timers[i].at {
			i = j
		}
	}
	t := k.timers[i]
	k.timers = slices.Delete(k.timers, i, i+1)
	bl := Backlog{Due: k.due(t.at), Timers: k.core}
	e := k.d.Step(ctx, k.batch, k.id, Trigger{Tag: t.tag, AtMs: t.at}, &bl)
	if len(bl.open) > 0 { // back into the buffer, before the envelopes after t.at
		k.pending = append(slices.Clone(bl.open), k.pending...)
	}
	k.stats.Firings++
	k.stats.Activations += e.Activations
	k.apply(&e, emit)
}

// apply carries out a step's effects on the key's in-memory image, but its buffer changes.
func (k *key) apply(e *Effects, emit func(int64, []byte)) {
	for _, r := range e.Results {
		k.stats.ModelCalls += r.ModelCalls
		if k.d.Observe != nil {
			k.d.Observe(r)
		}
	}
	for _, o := range e.Outputs {
		emit(o.Kind, o.Bytes)
	}
	for _, op := range e.TimerOps {
		if op.Set {
			k.set(op.Tag, op.AtMs)
		} else {
			k.clear(op.Tag)
		}
	}
}

// due takes the buffered envelopes with event time ≤ atMs out of the buffer, in processing
// order.
func (k *key) due(atMs int64) []bufferedEnv {
	if !k.sorted {
		sortDue(k.pending)
		k.sorted = true
	}
	n, _ := slices.BinarySearchFunc(k.pending, atMs, func(b bufferedEnv, t int64) int {
		if b.Env.GetEventTimeMs() <= t {
			return -1
		}
		return 1
	})
	due := k.pending[:n:n]
	k.pending = k.pending[n:]
	return due
}

// onlyIdleLeft reports whether the key's one remaining Beam timer is the idle TTL, with no
// other core timer armed and no envelope buffered.
func (k *key) onlyIdleLeft() bool {
	return len(k.timers) == 1 && k.timers[0].tag == host.TagTTL && len(k.pending) == 0 && len(k.core) == 1
}

func (k *key) set(tag string, at int64) {
	if n := len(k.timers); n > 0 && k.timers[n-1] == (beamTimer{tag, at}) {
		return // already the last one set: setting it again changes nothing
	}
	k.clear(tag)
	k.timers = append(k.timers, beamTimer{tag: tag, at: at})
}

func (k *key) clear(tag string) {
	k.timers = slices.DeleteFunc(k.timers, func(t beamTimer) bool { return t.tag == tag })
}

// commit writes what batch b changed into the key's cells: an empty value clears a cell.
func commit(cells host.MapStore, b host.Batch) {
	for c, v := range b.Writes() {
		if len(v) == 0 {
			delete(cells, c)
			continue
		}
		cells[c] = v
	}
}
