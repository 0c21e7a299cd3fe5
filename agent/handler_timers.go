package agent

import (
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// wait is the durable wait a run suspends on: a timer, a signal, or the deadline of ToolsBy.
type wait struct {
	// deadline is the continuation's deadline; when wake is set it is the wait's end (the
	// activation resumes there), else a fail-closed deadline (Await without a deadline).
	deadline int64
	wake     bool
	signal   string
}

// suspended reports whether the run suspended: it emitted intents or began a durable wait.
func (hc *Context) suspended() bool { return hc.fresh != nil || hc.wait != nil }

// suspension completes s with the wait that suspended the run at position pos (the wait's own
// operation, unless intents were emitted) and names it in the SUSPENDED event's attrs.
func (w *wait) suspension(s *statecodec.Suspension, pos uint32, attrs map[string]string) {
	if len(s.PendingIntentIDs) == 0 {
		s.StepIndex = pos
	}
	s.DeadlineMs = w.deadline
	if w.wake {
		s.WakeAtMs = w.deadline
		attrs[tracing.AttrWakeAt] = itoa(w.deadline)
	}
	if w.signal != "" {
		s.AwaitingSignal = w.signal
		attrs[tracing.AttrSignalName] = w.signal
	}
}

// Until waits until event time atMs: a durable timer, journaled as a TIMER operation. The
// first run suspends the activation (Until returns ErrSuspended) with no pending intent; when
// the key's deadline timer fires at atMs, the activation resumes and Until returns nil. A
// time not after the event time being processed is over at once.
func (hc *Context) Until(atMs int64) error {
	return hc.timer("until", atMs, func(int64) int64 { return atMs })
}

// Sleep waits for d of event time: until the event time of the input being processed when
// Sleep first runs, plus d. The wake time is journaled (JournalEntry.at_ms), so every later
// run waits for the same instant whatever input resumed it.
func (hc *Context) Sleep(d time.Duration) error {
	ms := d.Milliseconds()
	return hc.timer("sleep", ms, func(now int64) int64 { return now + ms })
}

// timer is the TIMER operation of Until and Sleep; arg (the time or the duration) is its
// journaled argument, wakeAt computes the wake time when the operation first runs.
func (hc *Context) timer(kind string, arg int64, wakeAt func(now int64) int64) error {
	e, replayed, err := hc.begin(pb.JournalEntry_TIMER, kind, []byte(itoa(arg)))
	if err != nil {
		return err
	}
	now := hc.act.c.now
	switch {
	case replayed && e.GetFound():
		return nil
	case replayed:
		return hc.fails(fail(records.ReasonStateCorrupt, nil, "journaled timer %d is not over", hc.pos-1))
	}
	e.AtMs = wakeAt(now)
	if e.AtMs <= now {
		e.Found = true
		return nil
	}
	hc.wait = &wait{deadline: e.AtMs, wake: true}
	return ErrSuspended
}

// ToolsBy is Tools with a deadline: the answers or event time atMs, whichever comes first. Its
// intents expire at atMs; when the key's deadline timer fires there, every call still
// unanswered gets a ToolResult with status EXPIRED written by the runtime, and the activation
// resumes. A result whose event time is at or after atMs loses the race, whether it reaches
// the key before the timer or after: it is an orphaned_result dead letter. A deadline not
// after the event time being processed expires the unanswered calls at once, without intents.
func (hc *Context) ToolsBy(atMs int64, calls ...ToolCall) ([]*pb.ToolResult, error) {
	return hc.tools(calls, &atMs)
}

// expiredResult is the result the runtime writes for the call at step when a wait's deadline
// passed before its answer.
func (act *activation) expiredResult(step uint32) *pb.ToolResult {
	c := act.c
	return &pb.ToolResult{IntentId: intent.ID(c.entity, act.seq, step), EntityKey: c.entity, Seq: act.seq,
		Status: pb.ToolResult_EXPIRED, ErrorMessage: "no answer before the wait's deadline", CompletedAtMs: c.now}
}

// answeredLate reports whether an answer at event time atMs comes at or after the deadline of
// the key's durable wait (a wait with a wake time), so that it loses to the wake.
func answeredLate(cont *statecodec.Continuation, atMs int64) bool {
	return cont.WakeAtMs() != 0 && atMs >= cont.WakeAtMs()
}

// wake ends the suspended activation's durable wait at its deadline: each intent still
// pending gets an EXPIRED result, the wait's TIMER or AWAIT operation is marked over, and
// the handler runs again.
func (act *activation) wake() error {
	c, v := act.c, act.v
	pending, _ := act.pendingIntents()
	for _, ti := range pending {
		r := act.expiredResult(ti.GetStepIndex())
		if err := act.recordResult(ti.GetIntentId(), r); err != nil {
			return err
		}
		v.pending.Remove(ti.GetIntentId())
		act.tr.emit(pb.TraceEvent_TOOL_CALL, ti.GetStepIndex(), c.now, toolCallAttrs(ti, r))
	}
	if len(pending) > 0 {
		v.touch(pendingCell)
	}
	if e := act.waitEntry(); e != nil {
		e.Found = true
	}
	v.cont = nil
	v.touch(contCell)
	return act.handle()
}

// waitEntry is the TIMER or AWAIT operation the activation is suspended on; nil when it
// suspended on intents.
func (act *activation) waitEntry() *pb.JournalEntry {
	entries := act.journal.GetEntries()
	pos := int(act.v.cont.StepIndex())
	if pos >= len(entries) {
		return nil
	}
	switch e := entries[pos]; e.GetOp() {
	case pb.JournalEntry_TIMER, pb.JournalEntry_AWAIT:
		return e
	}
	return nil
}
