package drive

import (
	"context"
	"math"
	"slices"

	"github.com/beamagents/beamagents/agent"
)

// Driver runs keys in memory exactly as RunAgent runs them with event-time ordering, from
// the first input to the end of a bounded input (see the package documentation).
type Driver struct {
	Core
	// OrderResolutionMs is the ordering resolution; 0 or 1 means every distinct event time
	// is its own bucket. Outputs do not depend on it.
	OrderResolutionMs int64
	// OutputsOnly skips the work that can change no output: a last firing of the idle TTL,
	// with nothing else armed and nothing buffered, only drops the key's memory and replay
	// cache, and the state at the end is never encoded. Stats.Cells is then empty.
	OutputsOnly bool
}

// key is one key's in-memory image of RunAgent's Beam state: the committed cells, the
// ordering buffer (a bag) and the armed Beam timers. The cells live in one batch for the
// whole input, which keeps the decoded memory and replay cache between firings and encodes
// them once, at the end (agent.Batch.DeferEncoding): every input is still atomic, and sees
// what the inputs before it committed, exactly as when each firing commits its own batch.
type key struct {
	d      *Driver
	id     []byte
	cells  agent.MapStore // the state before the first input: none
	batch  *agent.Batch
	buffer [][]byte
	timers []beamTimer // armed, in the order they were set
	stats  Stats
}

// Stats are what a run of one key did.
type Stats struct {
	// Cells is the key's committed state at the end of input.
	Cells agent.MapStore
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
	k := &key{d: d, id: id, cells: agent.MapStore{}}
	k.batch = d.Batch(k.cells)
	k.batch.DeferEncoding()
	for _, v := range values {
		k.element(ctx, v, emit)
	}
	for len(k.timers) > 0 && !(d.OutputsOnly && k.onlyIdleLeft()) {
		k.fire(ctx, emit)
	}
	if !d.OutputsOnly {
		commit(k.cells, k.batch)
	}
	k.stats.Cells = k.cells
	return k.stats
}

func (k *key) sink(emit func(int64, []byte)) func(*agent.Result) {
	return func(r *agent.Result) {
		k.stats.ModelCalls += r.ModelCalls
		Emit(r, emit)
	}
}

// element is RunAgent's processing of one input value before the watermark moves: a restore
// is applied at once, an envelope waits in the buffer for the watermark to pass its bucket.
func (k *key) element(ctx context.Context, value []byte, emit func(int64, []byte)) {
	in := DecodeInput(k.id, value)
	switch {
	case in.Dead != nil:
		emit(OutDeadLetter, Marshal(in.Dead))
	case in.Snapshot != nil:
		timers := Timers{}
		k.d.Restore(ctx, k.batch, in.Snapshot, timers, k.sink(emit))
		if len(timers) > 0 {
			k.buffer = append(k.buffer, AppendTimers(nil, timers))
			for _, op := range Changes(nil, timers) {
				k.set(op.Tag, op.AtMs)
			}
		}
	default:
		k.buffer = append(k.buffer, AppendFrame(nil, in.Env.GetEventTimeMs(), value))
		b := Bucket(in.Env.GetEventTimeMs(), k.d.OrderResolutionMs)
		k.set(OrderTag(b), b)
	}
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
	due, rest, timers, bad := Split(k.buffer, t.at)
	if bad > 0 {
		emit(OutDeadLetter, Marshal(CorruptBuffer(k.id, bad)))
	}
	for _, d := range due {
		k.clear(OrderTag(Bucket(d.Env.GetEventTimeMs(), k.d.OrderResolutionMs)))
	}
	before := timers.Clone()
	timers.Woken(t.tag, t.at)
	k.stats.Firings++
	k.stats.Activations += len(due)
	k.d.Firing(ctx, k.batch, k.id, due, timers, t.at, k.sink(emit))
	ops := Changes(before, timers)
	if len(due) > 0 || bad > 0 || len(ops) > 0 {
		k.buffer = nil
		if packed := AppendTimers(rest, timers); len(packed) > 0 {
			k.buffer = [][]byte{packed}
		}
	}
	for _, op := range ops {
		if op.Set {
			k.set(op.Tag, op.AtMs)
		} else {
			k.clear(op.Tag)
		}
	}
}

// onlyIdleLeft reports whether the key's one remaining Beam timer is the idle TTL, with no
// other core timer armed and no envelope buffered.
func (k *key) onlyIdleLeft() bool {
	if len(k.timers) != 1 || k.timers[0].tag != agent.TagTTL {
		return false
	}
	_, rest, timers, bad := Split(k.buffer, math.MinInt64)
	return len(rest) == 0 && bad == 0 && len(timers) == 1
}

func (k *key) set(tag string, at int64) {
	k.clear(tag)
	k.timers = append(k.timers, beamTimer{tag: tag, at: at})
}

func (k *key) clear(tag string) {
	k.timers = slices.DeleteFunc(k.timers, func(t beamTimer) bool { return t.tag == tag })
}

// commit writes what batch b changed into the key's cells: an empty value clears a cell.
func commit(cells agent.MapStore, b *agent.Batch) {
	for c, v := range b.Writes() {
		if len(v) == 0 {
			delete(cells, c)
			continue
		}
		cells[c] = v
	}
}
