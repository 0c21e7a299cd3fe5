package statecodec

import (
	"slices"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/migrate"
)

// Suspension describes an activation that waits for tool results or approvals.
type Suspension struct {
	Seq              int64    // the suspended activation
	StepIndex        uint32   // the step that suspended; resumption continues at StepIndex+1
	PendingIntentIDs []string // intents that must all resolve before resumption
	Adapter          string   // names the component that owns Snapshot
	Snapshot         []byte   // opaque resume state, never parsed here
	SuspendedAtMs    int64    // event time of the suspension
	DeadlineMs       int64    // event time at which the deadline fires
	// WakeAtMs, when not 0, makes the deadline a wake: a durable wait that ends there (the
	// activation resumes) instead of failing closed. It equals DeadlineMs.
	WakeAtMs int64
	// AwaitingSignal names the signal the activation waits for; empty when none.
	AwaitingSignal string
	// Agent names the agent that started the activation, which alone may resume it; set
	// only when a run routes keys between two agents (a canary), empty otherwise.
	Agent string
}

// Continuation is a key's suspension state (cell [CellContinuation]). The cell is empty while
// the key is not suspended; a nil *Continuation stands for that. It is not safe for concurrent
// use.
type Continuation struct {
	c     *pb.Continuation
	stats Stats
}

// ContinuationOptions select the state schema of a continuation. The zero value selects the
// schema of this build.
type ContinuationOptions struct {
	// Schema is the state schema the continuation is stamped with and migrated to; nil
	// selects migrate.Default().
	Schema *migrate.Registry
}

// Suspend returns the continuation of s with the default options; see
// [ContinuationOptions.Suspend].
func Suspend(s Suspension) (*Continuation, error) { return ContinuationOptions{}.Suspend(s) }

// Suspend returns the continuation of s, stamped with the current version of o.Schema. It
// refuses with [ErrInvalidArgument] a negative seq, no pending intent (unless the suspension
// is a durable wait: a wake time or an awaited signal), an empty, non-UTF-8 or repeated intent
// id, a non-UTF-8 adapter or signal name, a deadline not after the suspension, and a wake time
// other than the deadline.
func (o ContinuationOptions) Suspend(s Suspension) (*Continuation, error) {
	switch {
	case s.Seq < 0:
		return nil, invalid(CellContinuation, "negative seq")
	case len(s.PendingIntentIDs) == 0 && s.WakeAtMs == 0 && s.AwaitingSignal == "":
		return nil, invalid(CellContinuation, "a suspension needs at least one pending intent, a wake time or an awaited signal")
	case !utf8.ValidString(s.Adapter), !utf8.ValidString(s.AwaitingSignal), !utf8.ValidString(s.Agent):
		return nil, invalid(CellContinuation, "adapter, awaited signal or agent is not valid UTF-8")
	case s.DeadlineMs <= s.SuspendedAtMs:
		return nil, invalid(CellContinuation, "deadline_ms must be after suspended_at_ms")
	case s.WakeAtMs != 0 && s.WakeAtMs != s.DeadlineMs:
		return nil, invalid(CellContinuation, "wake_at_ms must equal deadline_ms")
	}
	seen := make(map[string]bool, len(s.PendingIntentIDs))
	for _, id := range s.PendingIntentIDs {
		if id == "" || !utf8.ValidString(id) || seen[id] {
			return nil, invalid(CellContinuation, "pending intent ids must be distinct non-empty UTF-8 strings")
		}
		seen[id] = true
	}
	return &Continuation{c: &pb.Continuation{
		StateSchemaVersion: schemaOf(o.Schema).Current(),
		Seq:                s.Seq,
		StepIndex:          s.StepIndex,
		PendingIntentIds:   slices.Clone(s.PendingIntentIDs),
		Adapter:            s.Adapter,
		Snapshot:           slices.Clone(s.Snapshot),
		SuspendedAtMs:      s.SuspendedAtMs,
		DeadlineMs:         s.DeadlineMs,
		WakeAtMs:           s.WakeAtMs,
		AwaitingSignal:     s.AwaitingSignal,
		Agent:              s.Agent,
	}}, nil
}

// DecodeContinuation decodes a [CellContinuation] cell with the default options; see
// [ContinuationOptions.Decode].
func DecodeContinuation(b []byte) (*Continuation, error) { return ContinuationOptions{}.Decode(b) }

// Decode decodes a [CellContinuation] cell: parse, version check, migrate to o.Schema. Empty
// bytes (not suspended) give nil and no error. A pending id listed twice is kept once (counted
// in Stats.DuplicatesDropped). Errors: [ErrCorrupt], [ErrFutureVersion], [ErrMigration]; b is
// never modified.
func (o ContinuationOptions) Decode(b []byte) (*Continuation, error) {
	if len(b) == 0 {
		return nil, nil
	}
	c := &Continuation{c: &pb.Continuation{}}
	if err := decodeVersioned(CellContinuation, b, c.c, o.Schema, &c.stats); err != nil {
		return nil, err
	}
	var dropped []string
	c.c.PendingIntentIds, dropped = dedupeKeepLast(c.c.PendingIntentIds, func(s string) string { return s })
	c.stats.DuplicatesDropped += int64(len(dropped))
	return c, nil
}

// Encode returns the deterministic bytes of the cell; a nil Continuation encodes as no bytes,
// which clears the cell.
func (c *Continuation) Encode() ([]byte, error) {
	if c == nil {
		return nil, nil
	}
	return encode(CellContinuation, c.c)
}

// Resolve removes intentID from the pending intents and reports whether it was pending; a
// result for an intent that is not pending is an orphan.
func (c *Continuation) Resolve(intentID string) bool {
	i := slices.Index(c.c.PendingIntentIds, intentID)
	if i < 0 {
		return false
	}
	c.c.PendingIntentIds = slices.Delete(c.c.PendingIntentIds, i, i+1)
	return true
}

// AllResolved reports whether no intent is pending any more: the activation resumes.
func (c *Continuation) AllResolved() bool { return len(c.c.PendingIntentIds) == 0 }

// Pending returns the intents still pending, in suspension order.
func (c *Continuation) Pending() []string { return slices.Clone(c.c.PendingIntentIds) }

// IsPending reports whether intentID is still pending.
func (c *Continuation) IsPending(intentID string) bool {
	return slices.Contains(c.c.PendingIntentIds, intentID)
}

// DeadlineDue reports whether the deadline has been reached at event time atMs.
func (c *Continuation) DeadlineDue(atMs int64) bool { return atMs >= c.c.DeadlineMs }

// Escalate records one timeout escalation and moves the deadline to nextDeadlineMs, which must
// be later than the current one. How many escalations are allowed is the caller's policy;
// Escalations tells how many were made.
func (c *Continuation) Escalate(nextDeadlineMs int64) error {
	switch {
	case nextDeadlineMs <= c.c.DeadlineMs:
		return invalid(CellContinuation, "an escalated deadline must be later than the current one")
	case c.c.Escalations == 1<<32-1:
		return invalid(CellContinuation, "escalation count exhausted")
	}
	c.c.Escalations++
	c.c.DeadlineMs = nextDeadlineMs
	return nil
}

// Seq returns the suspended activation's seq.
func (c *Continuation) Seq() int64 { return c.c.Seq }

// StepIndex returns the step that suspended.
func (c *Continuation) StepIndex() uint32 { return c.c.StepIndex }

// DeadlineMs returns the event time at which the deadline fires.
func (c *Continuation) DeadlineMs() int64 { return c.c.DeadlineMs }

// WakeAtMs returns the wake time of a durable wait; 0 when the deadline fails closed.
func (c *Continuation) WakeAtMs() int64 { return c.c.WakeAtMs }

// AwaitingSignal names the signal the suspended activation waits for; empty when none.
func (c *Continuation) AwaitingSignal() string { return c.c.AwaitingSignal }

// Escalations returns the escalations made for this suspension.
func (c *Continuation) Escalations() uint32 { return c.c.Escalations }

// Adapter names the component that owns the snapshot.
func (c *Continuation) Adapter() string { return c.c.Adapter }

// Agent returns the name of the agent that started the activation; empty when the run that
// suspended it had no canary (the run's agent started it).
func (c *Continuation) Agent() string { return c.c.Agent }

// Snapshot returns the opaque resume state; the caller must not modify it.
func (c *Continuation) Snapshot() []byte { return c.c.Snapshot }

// SetSnapshot replaces the resume state, for a suspension that keeps waiting with progress
// recorded; the continuation keeps snapshot, not a copy.
func (c *Continuation) SetSnapshot(snapshot []byte) { c.c.Snapshot = snapshot }

// Stats returns what was migrated or repaired at decode.
func (c *Continuation) Stats() Stats { return c.stats }

// Proto returns a copy of the continuation.
func (c *Continuation) Proto() *pb.Continuation { return proto.Clone(c.c).(*pb.Continuation) }
