package effector

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/records"
)

// Approval is one APPROVAL intent as the console shows it.
type Approval struct {
	Intent *pb.ToolIntent
	// Args are the intent's arguments in the tool's own shape, as the tool would receive them
	// (the intent's args_json when the tool is unknown or cannot present them).
	Args string
	// Escalations is the highest attempt seen for the intent (the runtime re-emits an
	// approval intent with attempt+1 at each deadline escalation).
	Escalations uint32
	// Expired is set once the intent's deadline passed (its expires_at_ms on the effector's
	// clock, or under ExpiryEmission its window from its emission): such an approval can no
	// longer be decided.
	Expired bool
	// DeadlineMs is when the approval expires on the effector's clock (0: never), under the
	// effector's expiry policy.
	DeadlineMs int64
	// Decision is "approved" or "rejected" once decided here, else "".
	Decision string
	Approver string

	emitted time.Time // the listed attempt's emission, as its transport recorded it
}

// Approvals holds APPROVAL intents until a human decides them. Decisions are claimed in the
// dedup store under "approval:<intent id>", so one decision wins across effectors sharing a
// store. Decided approvals stay listed (with their decision) for the console.
type Approvals struct {
	e       *Effector
	mu      sync.Mutex
	byID    map[string]*Approval
	order   []string
	sink    func(context.Context, *pb.AgentEnvelope) error
	changed chan struct{}
}

func newApprovals(e *Effector) *Approvals {
	return &Approvals{e: e, byID: map[string]*Approval{}, changed: make(chan struct{})}
}

// SetSink sets where decisions go (the results output); it must be set before Decide.
func (a *Approvals) SetSink(f func(context.Context, *pb.AgentEnvelope) error) {
	a.mu.Lock()
	a.sink = f
	a.mu.Unlock()
}

// add lists ti, emitted at emitted (zero: unknown), or updates its listing with a later
// attempt. An approval listed under ti's id for another call (another content digest) stays
// as it is and is returned: ti is refused.
func (a *Approvals) add(ti *pb.ToolIntent, emitted time.Time) (other *pb.ToolIntent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, ok := a.byID[ti.GetIntentId()]
	switch {
	case !ok:
		a.byID[ti.GetIntentId()] = &Approval{Intent: proto.CloneOf(ti), Escalations: ti.GetAttempt(), emitted: emitted}
		a.order = append(a.order, ti.GetIntentId())
	case !sameCall(cur.Intent, ti):
		return cur.Intent
	case ti.GetAttempt() > cur.Escalations:
		cur.Intent, cur.Escalations, cur.emitted = proto.CloneOf(ti), ti.GetAttempt(), emitted
	}
	a.notifyLocked()
	return nil
}

// sameCall reports whether a and b are attempts of one call: the same content digest.
func sameCall(a, b *pb.ToolIntent) bool {
	d, err := intent.Digest(a)
	return err == nil && digestIs(d, b)
}

func (a *Approvals) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// List returns the approvals in arrival order, with expiry evaluated now.
func (a *Approvals) List() []Approval {
	now := a.e.nowMs()
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Approval, 0, len(a.order))
	for _, id := range a.order {
		ap := *a.byID[id]
		ap.Args = a.e.present(ap.Intent)
		v := a.e.o.Expiry.judge(ap.Intent, ap.emitted, now)
		ap.Expired, ap.DeadlineMs = ap.Decision == "" && v.Expired, v.DeadlineMs
		out = append(out, ap)
	}
	return out
}

// Open counts approvals neither decided nor expired.
func (a *Approvals) Open() int {
	return len(slices.DeleteFunc(a.List(), func(ap Approval) bool { return ap.Decision != "" || ap.Expired }))
}

// Changed returns a channel closed at the next change (a new approval or a decision).
func (a *Approvals) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}

// conflicting reports whether rec, the decision recorded for ti's id, decided another call
// than ti (a digest that differs); it then counts and logs the conflict. A record without a
// digest, written before decisions carried one, cannot be checked and does not conflict.
func (a *Approvals) conflicting(ti *pb.ToolIntent, rec []byte) bool {
	env := &pb.AgentEnvelope{}
	if proto.Unmarshal(rec, env) != nil {
		return false
	}
	d := env.GetApproval().GetIntentDigest()
	if len(d) == 0 || digestIs(d, ti) {
		return false
	}
	a.e.metrics.add(CountIDConflicts, 1)
	a.e.o.Logger.Warn("effector: intent id conflict: decision refused", "intent_id", ti.GetIntentId(), "entity_key", fmt.Sprintf("%q", ti.GetEntityKey()))
	return true
}

// Decision is a human decision on a pending approval.
type Decision struct {
	Approved bool
	// Approver is who decided (required).
	Approver string
	// Note is the approver's note (empty for none), at most records.MaxApprovalNoteBytes of
	// UTF-8.
	Note string
	// ArgsJSON, when set, are arguments the approver edited, in the form of the intent's
	// args_json (the canonical fields object): the gated call runs with them instead of the
	// requested ones. Only an approval carries them; they are signed with the decision.
	ArgsJSON string
}

// Decide records a human decision on a pending approval, with the approver's note (empty for
// none): DecideWith without edited arguments.
func (a *Approvals) Decide(ctx context.Context, id string, approved bool, approver, note string) (*pb.AgentEnvelope, error) {
	return a.DecideWith(ctx, id, Decision{Approved: approved, Approver: approver, Note: note})
}

// DecideWith records d on a pending approval and publishes it as an Approval envelope on the
// intent's entity key. It refuses unknown, expired and already decided approvals
// (ErrApprovalUnknown, ErrApprovalExpired, ErrApprovalDecided), a note over
// records.MaxApprovalNoteBytes, and edited arguments on a rejection, over
// records.MaxApprovalArgsBytes, or that do not decode as the tool's arguments when the tool
// is bound here (ErrConsole).
func (a *Approvals) DecideWith(ctx context.Context, id string, d Decision) (*pb.AgentEnvelope, error) {
	approved, approver, note := d.Approved, d.Approver, d.Note
	a.mu.Lock()
	ap, ok := a.byID[id]
	var ti *pb.ToolIntent
	var emitted time.Time
	if ok {
		ti, emitted = ap.Intent, ap.emitted
	}
	decided := ok && ap.Decision != ""
	sink := a.sink
	a.mu.Unlock()
	switch {
	case !ok:
		return nil, &Error{Code: CodeApprovalUnknown, Detail: "no pending approval " + id}
	case decided:
		return nil, &Error{Code: CodeApprovalDecided, Detail: "approval " + id + " is already decided"}
	case approver == "":
		return nil, &Error{Code: CodeConsole, Detail: "a decision needs an approver"}
	case len(note) > records.MaxApprovalNoteBytes || !utf8.ValidString(note):
		return nil, &Error{Code: CodeConsole, Detail: fmt.Sprintf("a note is at most %d bytes of UTF-8", records.MaxApprovalNoteBytes)}
	}
	if err := a.e.checkEditedArgs(ti, d); err != nil {
		return nil, err
	}
	now := a.e.nowMs()
	v := a.e.o.Expiry.judge(ti, emitted, now)
	if v.Expired {
		return nil, &Error{Code: CodeApprovalExpired, Detail: "approval " + id + " expired"}
	}
	key := "approval:" + id
	owner := fmt.Sprintf("%s/%d", a.e.o.Owner, a.e.claims.Add(1))
	c, err := a.e.o.Store.Claim(ctx, key, owner, now, a.e.o.Lease.Milliseconds())
	if err != nil {
		return nil, storeFailed(err)
	}
	if c.State == store.Done && a.conflicting(ti, c.Result) {
		return nil, &Error{Code: CodeIntentConflict, Detail: "the decision recorded for " + id + " answered another call"}
	}
	if c.State != store.Claimed {
		return nil, &Error{Code: CodeApprovalDecided, Detail: "approval " + id + " is decided by another effector"}
	}
	// The decision carries the intent's event time (the clock under ExpiryClock).
	decision := &pb.AgentEnvelope_Approval{IntentId: id, Approved: approved, Approver: approver, DecidedAtMs: v.EventMs, Note: note, ArgsJson: d.ArgsJSON}
	if kr := a.e.o.Keyring; kr != nil {
		// Signing with the active key of a valid keyring cannot fail.
		_ = intent.SignApproval(decision, ti, kr)
	} else {
		decision.IntentDigest, _ = intent.Digest(ti)
	}
	env := &pb.AgentEnvelope{
		EntityKey:   ti.GetEntityKey(),
		EventTimeMs: v.EventMs,
		Payload:     &pb.AgentEnvelope_Approval_{Approval: decision},
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
	if err != nil {
		return nil, &Error{Code: CodeStore, Detail: "encoding decision", Err: err}
	}
	if sink != nil {
		if err := sink(ctx, env); err != nil {
			return nil, &Error{Code: CodeStore, Detail: "publishing the decision on " + id, Err: err}
		}
	}
	if _, err := a.e.o.Store.Complete(ctx, key, owner, b); err != nil {
		return nil, storeFailed(err)
	}
	a.e.metrics.add(CountDecisions, 1)
	a.mu.Lock()
	ap.Decision, ap.Approver = "rejected", approver
	if approved {
		ap.Decision = "approved"
	}
	a.notifyLocked()
	a.mu.Unlock()
	return env, nil
}

// checkEditedArgs refuses edited arguments that cannot run: on a rejection, over
// records.MaxApprovalArgsBytes, not one JSON object, or, when ti's tool is bound here, not
// the tool's arguments (decoded strictly, as an intent's args_json is before it runs).
func (e *Effector) checkEditedArgs(ti *pb.ToolIntent, d Decision) error {
	if d.ArgsJSON == "" {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return &Error{Code: CodeConsole, Detail: "edited arguments: " + fmt.Sprintf(format, args...)}
	}
	if !d.Approved {
		return refuse("only an approval runs the call")
	}
	if err := records.CheckApprovalArgs(d.ArgsJSON); err != nil {
		return refuse("%v", err)
	}
	if b, ok := e.tools[ti.GetToolName()]; ok {
		if _, err := b.present(d.ArgsJSON); err != nil {
			return refuse("not arguments of %s: %v", ti.GetToolName(), err)
		}
	}
	return nil
}
