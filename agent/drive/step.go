package drive

import (
	"context"

	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/records"
)

// Trigger is what one step of a key answers: one input value as it arrives (Value set), or
// one firing of the key's Beam timer (Tag set, Value nil), at event time AtMs.
type Trigger struct {
	Value []byte
	Tag   string
	AtMs  int64
}

// Backlog is what a firing reads of the key's ordering buffer: the envelopes due by the
// firing's time, in processing order (splitBuffer, or a held buffer's due prefix), the armed core
// timers, and the count of buffer entries that did not decode. Step takes the due envelopes
// and updates Timers in place.
type Backlog struct {
	Due    []bufferedEnv
	Timers Timers
	Bad    int

	// rest holds the envelopes not yet due, packed, when the backlog was read from the raw
	// buffer (ReadBuffer); raw says it was.
	rest []byte
	raw  bool
	// open are the due envelopes the step left buffered behind a burst whose window is still
	// open (Core.Firing), in processing order.
	open []bufferedEnv
}

// Effects are what one step decided, for the shell to carry out in this order: emit Outputs,
// commit the batch's writes, change the buffer (Buffer, ArmTimers or Rewrite), then apply
// TimerOps to the key's Beam timers, each set never earlier than the trigger's time.
type Effects struct {
	// Outputs are the step's outputs in emission order, serialized deterministically.
	Outputs []Output
	// Results are the core's results, in order (for a shell's metering); their outputs are
	// already in Outputs.
	Results []*host.Result
	// Buffer is an arriving envelope to append to the ordering buffer.
	Buffer *bufferedEnv
	// ArmTimers are core timers a restore armed, to append to the buffer.
	ArmTimers Timers
	// Rewrite says the buffer is to be replaced by the envelopes not yet due and the core
	// timers in the Backlog (after the step).
	Rewrite bool
	// Bag is the buffer's new content when Rewrite and the backlog came from ReadBuffer: one
	// element (empty when nothing is left), which BagOps hands to a shell.
	Bag []byte
	// TimerOps are the Beam timer operations, in order.
	TimerOps []host.TimerOp
	// Activations counts the envelopes handed to the core.
	Activations int
	// Firing says the trigger was a timer firing that the shell counts as one.
	Firing bool
}

// Output is one output: its kind (records.OutIntent … records.OutDeadLetter) and deterministic bytes.
type Output struct {
	Kind  int64
	Bytes []byte
}

func (e *Effects) emit(kind int64, b []byte) { e.Outputs = append(e.Outputs, Output{kind, b}) }

func (e *Effects) sink(r *host.Result) {
	e.Results = append(e.Results, r)
	Emit(r, e.emit)
}

// Step is the one choreography of a key's input or timer firing, shared by RunAgent, its
// bounded fast path and Driver: it decides, in batch b over the key's committed state, what
// the shell must emit, buffer, commit and arm. With event-time ordering (Core.Arrival unset)
// an arriving envelope is only buffered and arms its bucket's ordering timer; a restore is
// applied at once; a firing runs the backlog's due envelopes and core timers (Core.Firing).
// With arrival order each envelope runs as it arrives and only the core's own timers wake
// the key. backlog is read only for a firing with event-time ordering.
func (c Core) Step(ctx context.Context, b host.Batch, key []byte, t Trigger, backlog *Backlog) Effects {
	var e Effects
	if t.Value != nil {
		c.element(ctx, b, key, t, &e)
		return e
	}
	e.Firing = true
	if c.Arrival {
		switch {
		case c.Park && t.AtMs > c.EndMs:
			// Only the end of the input fires this. The deadline (armed once per
			// suspension, and consumed by this firing) parks a suspended key; the idle TTL
			// does nothing and is not armed again. No timer is cleared: on Prism a cleared
			// timer comes back as a firing at time 0, which would fire as a timeout.
			if t.Tag == host.TagDeadline {
				c.park(ctx, b, key, Timers{}, e.sink)
			}
		case t.Tag == host.TagDeadline || t.Tag == host.TagTTL:
			res, _ := b.Fire(ctx, key, t.Tag, t.AtMs)
			e.sink(res)
			e.TimerOps = b.Timers()
		}
		return e
	}
	c.firing(ctx, b, key, t, backlog, &e)
	return e
}

func (c Core) element(ctx context.Context, b host.Batch, key []byte, t Trigger, e *Effects) {
	in := DecodeInput(key, t.Value)
	switch {
	case in.Dead != nil:
		e.emit(records.OutDeadLetter, Marshal(in.Dead))
	case in.Snapshot != nil:
		timers := Timers{}
		c.Restore(ctx, b, in.Snapshot, timers, e.sink)
		if c.Arrival {
			e.TimerOps = b.Timers()
			return
		}
		if len(timers) > 0 {
			e.ArmTimers = timers
		}
		e.TimerOps = timerChanges(nil, timers)
	case c.Arrival:
		e.sink(c.activate(ctx, b, in.Env))
		e.Activations = 1
		e.TimerOps = b.Timers()
	default:
		e.Buffer = &bufferedEnv{Env: in.Env, Raw: t.Value}
		bucket := bucketOf(in.Env.GetEventTimeMs(), c.OrderResolutionMs)
		e.TimerOps = []host.TimerOp{{Tag: OrderTag(bucket), Set: true, AtMs: bucket}}
	}
}

// firing runs the backlog's due envelopes and core timers at t.AtMs. The ordering timer of a
// bucket the firing has reached would find nothing left to do and is cleared; a bucket after
// t.AtMs (a core timer fired inside it) may still hold envelopes, which its own timer runs.
func (c Core) firing(ctx context.Context, b host.Batch, key []byte, t Trigger, bl *Backlog, e *Effects) {
	if bl.Bad > 0 {
		e.emit(records.OutDeadLetter, Marshal(corruptBuffer(key, bl.Bad)))
	}
	var cleared int64
	var any bool
	for _, d := range bl.Due {
		if bk := bucketOf(d.Env.GetEventTimeMs(), c.OrderResolutionMs); bk <= t.AtMs && (!any || bk != cleared) && OrderTag(bk) != t.Tag {
			e.TimerOps = append(e.TimerOps, host.TimerOp{Tag: OrderTag(bk)})
			cleared, any = bk, true
		}
	}
	before := bl.Timers.Clone()
	bl.Timers.Woken(t.Tag, t.AtMs)
	open, endMs := c.Firing(ctx, b, key, bl.Due, bl.Timers, t.AtMs, e.sink)
	e.Activations = len(bl.Due) - len(open)
	if len(open) > 0 {
		// A burst's window is still open: its events wait in the buffer for its own timer.
		bl.open = open
		e.TimerOps = append(e.TimerOps, host.TimerOp{Tag: BurstTag(endMs), Set: true, AtMs: endMs})
	}
	if c.Park && t.AtMs > c.EndMs && len(bl.Timers) > 0 && len(open) == 0 {
		c.park(ctx, b, key, bl.Timers, e.sink)
	}
	ops := timerChanges(before, bl.Timers)
	e.Rewrite = len(bl.Due) > 0 || bl.Bad > 0 || len(ops) > 0
	e.TimerOps = append(e.TimerOps, ops...)
	if e.Rewrite && bl.raw {
		e.Bag = bl.Bag()
	}
}
