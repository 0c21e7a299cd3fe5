package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strings"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
	"github.com/beamagents/beamagents/tracing"
)

// handlerAdapter is the Continuation.adapter of a suspended handler activation; its snapshot
// is a binary HandlerJournal of journalVersion.
const (
	handlerAdapter = "beamagents.agent.handler.v1"
	journalVersion = 1
)

// begin opens the operation at the next position: a journaled one must be the same
// operation (op, subject and arguments), else the run is nondeterministic; a new one is
// appended to the journal. It reports whether the operation is replayed.
func (hc *Context) begin(op pb.JournalEntry_Op, name string, args ...[]byte) (*pb.JournalEntry, bool, error) {
	if err := hc.usable(); err != nil {
		return nil, false, err
	}
	pos := hc.pos
	if max := hc.act.c.a.limits.MaxOperations; pos >= max {
		return nil, false, hc.fails(fail(records.ReasonBudgetExceeded, nil, "activation reached its %d-operation budget", max))
	}
	hc.pos++
	digest := argsDigest(op, name, args)
	if pos < len(hc.j.Entries) {
		e := hc.j.Entries[pos]
		if e.GetOp() != op || e.GetName() != name || !bytes.Equal(e.GetArgsDigest(), digest) {
			return nil, false, hc.fails(fail(records.ReasonNondeterministicAgent, nil,
				"operation %d is %s %q; the journal recorded %s %q%s", pos, op, name, e.GetOp(), e.GetName(), sameArgs(e, op, name)))
		}
		return e, true, nil
	}
	e := &pb.JournalEntry{Op: op, Name: name, ArgsDigest: digest}
	hc.j.Entries = append(hc.j.Entries, e)
	return e, false, nil
}

func sameArgs(e *pb.JournalEntry, op pb.JournalEntry_Op, name string) string {
	if e.GetOp() == op && e.GetName() == name {
		return " with other arguments"
	}
	return ""
}

// argsDigest is SHA-256 over the operation and its arguments, each length-prefixed.
func argsDigest(op pb.JournalEntry_Op, name string, args [][]byte) []byte {
	h := sha256.New()
	var b [binary.MaxVarintLen64]byte
	h.Write(binary.AppendUvarint(b[:0], uint64(op)))
	h.Write(binary.AppendUvarint(b[:0], uint64(len(name))))
	h.Write([]byte(name))
	for _, a := range args {
		h.Write(binary.AppendUvarint(b[:0], uint64(len(a))))
		h.Write(a)
	}
	return h.Sum(nil)
}

// adapter is the Continuation.adapter of the agent's suspensions, its kind's.
func (a *Agent) adapter() string { return a.kind.Adapter() }

// decodeJournal reads the journal of a suspended activation, in the form of the agent's kind.
func (act *activation) decodeJournal(snapshot []byte) error {
	j, err := act.c.a.kind.ReadJournal(snapshot)
	if err != nil {
		return err
	}
	act.journal = j
	return nil
}

// handle runs the handler from the top over the journal, then ends, suspends or fails the
// activation.
func (act *activation) handle() error {
	c, v := act.c, act.v
	if c.a.kind.ReadsStateUpFront() {
		if err := v.need(memoryCell, cacheCell); err != nil {
			return err
		}
	}
	hc := &Context{act: act, j: act.journal, trigger: triggerOf(c.entity, act.seq, act.journal)}
	replaying := len(act.journal.Entries)
	err := protect(func() error { return c.a.handler(hc, hc.trigger) })
	var typed *Error
	switch {
	case hc.failure != nil:
		return hc.failure
	case hc.suspended():
		return act.suspendJournal(hc)
	case errors.As(err, &typed):
		return typed
	case err != nil:
		return fail(records.ReasonInternalPanic, err, "the handler failed")
	case hc.pos < replaying:
		return fail(records.ReasonNondeterministicAgent, nil, "the handler ended after %d operations; its journal recorded %d", hc.pos, replaying)
	}
	act.last = hc.lastPos()
	if hc.final != nil {
		act.out.Finals = append(act.out.Finals, hc.final)
	}
	return act.end(tracing.StatusOK)
}

// suspendJournal records the run's new intents as pending and keeps the journal in the
// continuation until they are all answered, or until the run's durable wait is over.
func (act *activation) suspendJournal(hc *Context) error {
	v, c := act.v, act.c
	ids := make([]string, len(hc.fresh))
	if len(hc.fresh) > 0 {
		if err := v.need(pendingCell); err != nil {
			return err
		}
		for i, ti := range hc.fresh {
			if err := v.pending.Add(ti); err != nil {
				return fail(records.ReasonStateCorrupt, err, "recording intent %s", ti.IntentId)
			}
			ids[i] = ti.IntentId
		}
		v.touch(pendingCell)
	}
	snap, err := act.journalBytes()
	if err != nil {
		return err
	}
	s := statecodec.Suspension{Seq: act.seq, PendingIntentIDs: ids, Adapter: act.c.a.adapter(), Snapshot: snap, SuspendedAtMs: c.now, Agent: c.startedBy()}
	if n := len(hc.fresh); n > 0 {
		s.StepIndex, s.DeadlineMs = hc.fresh[n-1].StepIndex, hc.fresh[n-1].ExpiresAtMs
	}
	attrs := map[string]string{tracing.AttrPendingIntents: itoa(int64(len(ids)))}
	if len(ids) > 0 {
		attrs[tracing.AttrIntentID] = strings.Join(ids, ",")
	}
	if w := hc.wait; w != nil {
		w.suspension(&s, hc.lastPos(), attrs)
	}
	attrs[tracing.AttrDeadline] = itoa(s.DeadlineMs)
	cont, err := v.contOpts().Suspend(s)
	if err != nil {
		return fail(records.ReasonStateCorrupt, err, "suspending")
	}
	v.cont = cont
	v.touch(contCell)
	for _, ti := range hc.fresh {
		act.emitIntent(ti)
	}
	act.tr.emit(pb.TraceEvent_SUSPENDED, s.StepIndex, c.now, attrs)
	act.tr.finish(tracing.StatusSuspended, s.StepIndex, c.now)
	return nil
}

// journalBytes encodes the journal, in the form of the agent's kind.
func (act *activation) journalBytes() ([]byte, error) { return act.c.a.kind.WriteJournal(act.journal) }

// entry returns the journal entry of intent id.
func (act *activation) entry(id string) (*pb.JournalEntry, error) {
	for _, e := range act.journal.GetEntries() {
		if e.GetIntentId() == id {
			return e, nil
		}
	}
	return nil, fail(records.ReasonStateCorrupt, nil, "the journal has no operation for pending intent %s", id)
}
