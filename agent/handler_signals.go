package agent

import (
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/tracing"
)

// Await waits for the signal name: a Signal envelope for the key (AgentEnvelope.signal). A
// signal of that name already queued in the key's inbox is taken at once, the oldest first;
// else the activation suspends (Await returns ErrSuspended) until one comes. The signal is
// journaled whole (an AWAIT operation), so later runs return the same one. Await has no
// deadline of its own: it is bounded by Limits.ApprovalTimeoutMs, and then the activation
// fails closed as an unanswered approval does (approval_timeout), without escalations.
func (hc *Context) Await(name string) (*pb.AgentEnvelope_Signal, error) {
	sig, _, err := hc.await(name, nil)
	return sig, err
}

// AwaitBy waits for the signal name until event time atMs: the signal and ok true, or, when
// the deadline comes first, no signal and ok false (the activation resumes at atMs). A signal
// whose event time is at or after atMs loses the race, whether it reaches the key before the
// deadline fires or after: it is a signal_unawaited dead letter.
func (hc *Context) AwaitBy(name string, atMs int64) (sig *pb.AgentEnvelope_Signal, ok bool, err error) {
	return hc.await(name, &atMs)
}

// await is the AWAIT operation of Await and, with a deadline (by), AwaitBy.
func (hc *Context) await(name string, by *int64) (*pb.AgentEnvelope_Signal, bool, error) {
	var args []byte
	if by != nil {
		args = []byte(itoa(*by))
	}
	if err := hc.unsharded("a wait for signal " + strconv.Quote(name)); err != nil {
		return nil, false, err
	}
	e, replayed, err := hc.begin(pb.JournalEntry_AWAIT, name, args)
	if err != nil {
		return nil, false, err
	}
	if !replayed {
		if done, err := hc.startAwait(e, by); err != nil || !done {
			return nil, false, err
		}
	}
	if !e.GetFound() {
		return nil, false, hc.fails(fail(records.ReasonStateCorrupt, nil, "journaled wait for signal %q at %d is not over", name, hc.pos-1))
	}
	return e.GetSignal(), e.GetSignal() != nil, nil
}

// startAwait begins the wait of entry e: a queued signal answers it at once, a deadline that
// has passed ends it at once, else the run suspends. It reports whether the wait is over.
func (hc *Context) startAwait(e *pb.JournalEntry, by *int64) (bool, error) {
	act := hc.act
	now := act.c.now
	w := &wait{deadline: now + act.c.a.limits.ApprovalTimeoutMs, signal: e.GetName()}
	if by != nil {
		e.AtMs = *by
		w.deadline, w.wake = *by, true
	}
	queued, err := act.takeQueued(e.GetName(), w)
	if err != nil {
		return false, hc.fails(err)
	}
	switch {
	case queued != nil:
		e.Signal, e.Found = queued, true
		return true, nil
	case w.wake && w.deadline <= now:
		e.Found = true
		return true, nil
	}
	hc.wait = w
	return false, ErrSuspended
}

// takeQueued removes from the inbox and returns the oldest signal named name that came before
// the wait's deadline; nil when there is none. Only a resumed activation can find one: a
// signal is queued while the key waits, and every signal still queued when an activation
// ends is dead-lettered.
func (act *activation) takeQueued(name string, w *wait) (*pb.AgentEnvelope_Signal, error) {
	if !act.resumed {
		return nil, nil
	}
	v := act.v
	if err := v.need(inboxCell); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(v.inbox.Envelopes, func(env *pb.AgentEnvelope) bool {
		return env.GetSignal().GetName() == name && (!w.wake || env.GetEventTimeMs() < w.deadline)
	})
	if i < 0 {
		return nil, nil
	}
	sig := proto.CloneOf(v.inbox.Envelopes[i].GetSignal())
	v.inbox.Envelopes = slices.Delete(slices.Clone(v.inbox.Envelopes), i, i+1)
	v.touch(inboxCell)
	return sig, nil
}

// signal handles a Signal envelope: it resumes the activation that awaits its name, waits in
// the inbox while the key waits for something else, and is a signal_unawaited dead letter
// when the key is idle or the signal comes at or after the deadline of the wait for it. A
// signal whose id the suspended activation already took, or that is already queued, is
// dropped: nothing changes and nothing is emitted.
func (c *call) signal(v *view, out *hostapi.Outputs, env *pb.AgentEnvelope) error {
	sig := env.GetSignal()
	if err := c.checkSignal(sig); err != nil {
		return err
	}
	if err := v.need(contCell); err != nil {
		return err
	}
	if v.cont == nil || !c.a.kind.AwaitsSignals() {
		return unawaited(sig, c.now)
	}
	act, err := c.suspendedActivation(v, out)
	if err != nil {
		return err
	}
	if act.took(sig.GetSignalId()) {
		return nil
	}
	if v.cont.AwaitingSignal() != sig.GetName() {
		return c.queueSignal(v, env)
	}
	if c.now >= v.cont.DeadlineMs() {
		return unawaited(sig, c.now)
	}
	e := act.waitEntry()
	if e == nil || e.GetOp() != pb.JournalEntry_AWAIT || e.GetName() != sig.GetName() {
		return fail(records.ReasonStateCorrupt, nil, "the continuation awaits signal %q; its journal's wait is not that", sig.GetName())
	}
	act.tr.begin(tracing.KindSignal, v.cont.StepIndex()+1, c.now)
	e.Signal, e.Found = proto.CloneOf(sig), true
	v.cont = nil
	v.touch(contCell)
	return act.handle()
}

// queueSignal queues a signal the suspended activation does not await (yet), unless one with
// its id is already queued.
func (c *call) queueSignal(v *view, env *pb.AgentEnvelope) error {
	if err := v.need(inboxCell); err != nil {
		return err
	}
	id := env.GetSignal().GetSignalId()
	if slices.ContainsFunc(v.inbox.Envelopes, func(q *pb.AgentEnvelope) bool { return q.GetSignal() != nil && q.GetSignal().GetSignalId() == id }) {
		return nil
	}
	return c.enqueue(v, env)
}

// took reports whether the activation's journal already holds the signal of id.
func (act *activation) took(id string) bool {
	return slices.ContainsFunc(act.journal.GetEntries(), func(e *pb.JournalEntry) bool {
		return e.GetSignal() != nil && e.GetSignal().GetSignalId() == id
	})
}

// unawaited is the failure of a signal no wait of the key takes. Its detail is the same
// whatever the key was doing, so a signal that loses a race is the same dead letter in
// either arrival order.
func unawaited(sig *pb.AgentEnvelope_Signal, atMs int64) error {
	return fail(records.ReasonSignalUnawaited, nil, "signal %q (id %q) at event time %d: no wait of the key takes it", sig.GetName(), sig.GetSignalId(), atMs)
}

// checkSignal admits sig under host.Deps.VerifyResults. A refused signal is a signal_refused dead
// letter: it resumes nothing and is not queued.
func (c *call) checkSignal(sig *pb.AgentEnvelope_Signal) error {
	m := c.deps.VerifyResults
	if m == nil {
		return nil
	}
	if err := m.CheckSignal(sig, c.deps.Keyring); err != nil {
		return fail(records.ReasonSignalRefused, err, "signal %q from %q", sig.GetName(), sig.GetSender())
	}
	return nil
}

// unawaitedLetters dead-letters the signals left queued when the activation they waited behind
// ended, each with its own envelope and event time.
func (c *call) unawaitedLetters(signals []*pb.AgentEnvelope) {
	for _, env := range signals {
		d := deadLetterOf(c.entity, env.GetEventTimeMs(), unawaited(env.GetSignal(), env.GetEventTimeMs()))
		records.WithEnvelope(d, env)
		c.res.DeadLetters = append(c.res.DeadLetters, d)
	}
}
