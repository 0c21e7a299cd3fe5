package effector

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
)

// Options configure an Effector. The zero value of each field selects its default.
type Options struct {
	Keyring *intent.Keyring
	Verify  intent.Mode // default intent.ModeRequire (the zero Mode)
	Store   store.Store // required
	Tools   []Binding
	// Clock is the effector's clock (expiry, leases, completion times); default time.Now.
	Clock func() time.Time
	// Owner names this effector in claims; default a random id.
	Owner string
	// Lease is how long a claim holds before another effector may take it over; default 30s.
	Lease time.Duration
	// ToolTimeout bounds one tool call; default 30s.
	ToolTimeout time.Duration
	// Poll is the wait between claims of an intent another effector holds; default 20ms.
	Poll time.Duration
	// Logger receives the intent id conflicts; default slog.Default().
	Logger *slog.Logger
	// Expiry is how intents' deadlines are judged; the zero value is ExpiryClock.
	Expiry Expiry
}

// Effector executes signed intents at most once per intent id and turns each into a
// ToolResult envelope. It is safe for concurrent use.
type Effector struct {
	o         Options
	tools     map[string]*bound
	metrics   Metrics
	approvals *Approvals
	claims    atomic.Int64 // numbers this process's claim tokens
}

// New validates o and negotiates every tool binding.
func New(o Options) (*Effector, error) {
	if o.Store == nil {
		return nil, &Error{Code: CodeConfig, Detail: "no dedup store"}
	}
	if err := o.Expiry.check(); err != nil {
		return nil, err
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Owner == "" {
		b := make([]byte, 8)
		rand.Read(b)
		o.Owner = "effector-" + hex.EncodeToString(b)
	}
	if o.Lease == 0 {
		o.Lease = 30 * time.Second
	}
	if o.ToolTimeout == 0 {
		o.ToolTimeout = 30 * time.Second
	}
	if o.Poll == 0 {
		o.Poll = 20 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	e := &Effector{o: o, tools: map[string]*bound{}}
	for _, b := range o.Tools {
		bd, err := bind(b)
		if err != nil {
			return nil, err
		}
		if _, dup := e.tools[b.Tool.Name()]; dup {
			return nil, &Error{Code: CodeConfig, Detail: "tool " + b.Tool.Name() + " bound twice"}
		}
		e.tools[b.Tool.Name()] = bd
	}
	e.approvals = newApprovals(e)
	return e, nil
}

// Metrics returns the effector's counters.
func (e *Effector) Metrics() *Metrics { return &e.metrics }

// Approvals returns the approvals waiting for a human decision.
func (e *Effector) Approvals() *Approvals { return e.approvals }

// Outcome is what handling one intent produced.
type Outcome struct {
	// Envelope is the ToolResult envelope to publish on the intent's entity key; nil when
	// the intent is an APPROVAL waiting for a decision.
	Envelope *pb.AgentEnvelope
	// Pending is set for an APPROVAL intent now listed in Approvals.
	Pending bool
}

func (e *Effector) nowMs() int64 { return e.o.Clock().UnixMilli() }

// Handle runs one intent through verify → expiry → dedup → execute and returns its result.
// Every refusal is a result (EXPIRED or REJECTED naming the reason). It returns an error only
// when the store fails or ctx ends while another effector holds the intent's claim, or when
// no registered agent provides the intent's tool (CodeToolUnregistered: nothing is recorded):
// the intent must then be delivered again. A shadow agent's intent (intent.IsShadow) is
// refused with CodeShadowIntent and no result: it must be dropped, never delivered again. The intent's emission is unknown to Handle: it is
// judged by the clock whatever Options.Expiry says (HandleEmitted knows it).
func (e *Effector) Handle(ctx context.Context, ti *pb.ToolIntent) (Outcome, error) {
	return e.HandleEmitted(ctx, ti, time.Time{})
}

// HandleEmitted is Handle for an intent whose emission its transport recorded: the
// modification time of the file it was read from, the publish time of its message. Under
// ExpiryEmission its window is measured from then, and its result carries the intent's event
// time (created_at_ms plus the time since its emission); under ExpiryClock, or with a zero
// emitted, it is Handle.
func (e *Effector) HandleEmitted(ctx context.Context, ti *pb.ToolIntent, emitted time.Time) (Outcome, error) {
	if ti.GetIntentId() == "" || len(ti.GetEntityKey()) == 0 {
		e.metrics.add(CountMalformed, 1)
		return e.refuse(ti, e.nowMs, pb.ToolResult_REJECTED, ReasonMalformed, "the intent has no intent_id or no entity_key"), nil
	}
	if intent.IsShadow(ti) {
		return Outcome{}, e.refuseShadow(ti)
	}
	if e.o.Verify == intent.ModeOff {
		e.metrics.add(countSignatureOff, 1)
	} else {
		e.metrics.signature(intent.Verify(ti, e.o.Keyring))
	}
	if err := e.o.Verify.Check(ti, e.o.Keyring); err != nil {
		var ie *intent.Error
		errors.As(err, &ie)
		// The intent's times are not trusted: the refusal carries the clock.
		return e.refuse(ti, e.nowMs, pb.ToolResult_REJECTED, ie.Outcome.Reason(), err.Error()), nil
	}
	now := e.nowMs()
	if v := e.o.Expiry.judge(ti, emitted, now); v.Expired {
		e.metrics.add(CountExpired, 1)
		return e.result(ti, pb.ToolResult_EXPIRED, nil, e.o.Expiry.expiredDetail(ti, emitted, v, now), v.EventMs), nil
	}
	if _, ok := e.tools[ti.GetToolName()]; !ok {
		return Outcome{}, e.holdBack(ti)
	}
	clock := e.eventClock(ti, emitted)
	if intent.RoutesToApproval(ti) {
		e.metrics.add(CountApprovals, 1)
		if other := e.approvals.add(ti, emitted); other != nil {
			return e.conflict(ti, clock, "an approval listed for this id asks for another call"), nil
		}
		return Outcome{Pending: true}, nil
	}
	return e.once(ctx, ti, clock)
}

// holdBack refuses an intent for a tool no registered agent provides: a configuration error
// of this effector (an --agents typo, a binary without the agent), not an outcome of the
// intent. Nothing is recorded, so the intent runs once the tool is registered.
func (e *Effector) holdBack(ti *pb.ToolIntent) error {
	e.metrics.add(CountHeldBack, 1)
	e.o.Logger.Error("effector: no registered agent provides the intent's tool: held back, not recorded; it runs once the tool is registered",
		"intent_id", ti.GetIntentId(), "tool", ti.GetToolName())
	return &Error{Code: CodeToolUnregistered, Detail: fmt.Sprintf("intent %s: no registered agent provides tool %q (held back, not recorded)", ti.GetIntentId(), ti.GetToolName())}
}

// refuseShadow refuses a shadow agent's intent: counted and logged, never executed, never
// recorded, and answered by no result, which would resume production's key under the same
// intent id.
func (e *Effector) refuseShadow(ti *pb.ToolIntent) error {
	e.metrics.add(CountShadowRefused, 1)
	e.o.Logger.Warn("effector: a shadow agent's intent refused; the tool did not run",
		"intent_id", ti.GetIntentId(), "tool", ti.GetToolName(), "reason", intent.Shadow.Reason())
	return &Error{Code: CodeShadowIntent, Detail: fmt.Sprintf("intent %s (%s): %s", ti.GetIntentId(), ti.GetToolName(), intent.Shadow.Reason())}
}

// once executes ti under a claim, or answers from the recorded completion. clock gives the
// event time of ti's outcome.
func (e *Effector) once(ctx context.Context, ti *pb.ToolIntent, clock func() int64) (Outcome, error) {
	id := ti.GetIntentId()
	// Each delivery claims under its own token: deliveries of one intent inside this process
	// exclude each other exactly as deliveries to two effectors do.
	owner := fmt.Sprintf("%s/%d", e.o.Owner, e.claims.Add(1))
	for {
		c, err := e.o.Store.Claim(ctx, id, owner, e.nowMs(), e.o.Lease.Milliseconds())
		if err != nil {
			return Outcome{}, storeFailed(err)
		}
		switch c.State {
		case store.Done:
			return e.recorded(ti, clock, c.Result)
		case store.Busy:
			select {
			case <-ctx.Done():
				return Outcome{}, &Error{Code: CodeStore, Detail: "intent " + id + " is claimed by another effector", Err: ctx.Err()}
			case <-time.After(e.o.Poll):
			}
			continue
		}
		if c.TakenOver {
			e.metrics.add(CountTakenOver, 1)
		}
		out := e.execute(ctx, ti, clock)
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(out.Envelope)
		if err != nil {
			return Outcome{}, &Error{Code: CodeStore, Detail: "encoding the result of " + id, Err: err}
		}
		rec, err := e.o.Store.Complete(ctx, id, owner, b)
		if err != nil {
			return Outcome{}, storeFailed(err)
		}
		if string(rec) != string(b) {
			// Another owner took this claim over and recorded first: its record answers.
			return e.recorded(ti, clock, rec)
		}
		return out, nil
	}
}

// recorded answers ti from the completion recorded for its id. The record's result carries
// the content digest of the intent it answered: the same digest is a redelivery, answered
// with the recorded bytes; another digest is another call that happens to carry the same id
// (a key whose counter started again), refused as intent_id_conflict. A record written
// before results carried a digest cannot be checked and answers as a redelivery.
func (e *Effector) recorded(ti *pb.ToolIntent, clock func() int64, rec []byte) (Outcome, error) {
	env := &pb.AgentEnvelope{}
	if err := proto.Unmarshal(rec, env); err != nil {
		return Outcome{}, &Error{Code: CodeStore, Detail: "recorded result of " + ti.GetIntentId() + " is not an envelope", Err: err}
	}
	switch d := env.GetToolResult().GetIntentDigest(); {
	case len(d) == 0:
		e.metrics.add(CountUnchecked, 1)
	case !digestIs(d, ti):
		return e.conflict(ti, clock, "the completion recorded for this id answered another call"), nil
	}
	e.metrics.add(CountDeduplicated, 1)
	return Outcome{Envelope: env}, nil
}

// digestIs reports whether d is ti's content digest.
func digestIs(d []byte, ti *pb.ToolIntent) bool {
	want, err := intent.Digest(ti)
	return err == nil && bytes.Equal(d, want)
}

// conflict refuses ti, whose id is already taken by another call: REJECTED naming
// intent_id_conflict, never executed, never recorded.
func (e *Effector) conflict(ti *pb.ToolIntent, clock func() int64, detail string) Outcome {
	e.metrics.add(CountIDConflicts, 1)
	e.o.Logger.Warn("effector: intent id conflict: refused, the tool did not run",
		"intent_id", ti.GetIntentId(), "entity_key", fmt.Sprintf("%q", ti.GetEntityKey()), "detail", detail)
	return e.refuse(ti, clock, pb.ToolResult_REJECTED, ReasonIDConflict, detail)
}

// execute runs the claimed intent's tool; refusals found here are recorded like results.
func (e *Effector) execute(ctx context.Context, ti *pb.ToolIntent, clock func() int64) Outcome {
	b, ok := e.tools[ti.GetToolName()]
	if !ok {
		return e.refuse(ti, clock, pb.ToolResult_REJECTED, ReasonUnknownTool, fmt.Sprintf("no tool %q is registered", ti.GetToolName()))
	}
	args, err := b.present(ti.GetArgsJson())
	if err != nil {
		return e.refuse(ti, clock, pb.ToolResult_REJECTED, ReasonBadArguments, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, e.o.ToolTimeout)
	defer cancel()
	payload, err := b.Tool.Invoke(ctx, tool.Call{IntentID: ti.GetIntentId(), EntityKey: ti.GetEntityKey(), Tool: ti.GetToolName(), Args: args})
	now := clock()
	e.metrics.add(CountExecuted, 1)
	if err != nil {
		e.metrics.add(CountToolErrors, 1)
		return e.result(ti, pb.ToolResult_ERROR, nil, ReasonToolFailed+": "+err.Error(), now)
	}
	return e.result(ti, pb.ToolResult_OK, payload, "", now)
}

func (e *Effector) refuse(ti *pb.ToolIntent, clock func() int64, status pb.ToolResult_Status, reason, detail string) Outcome {
	if status == pb.ToolResult_REJECTED {
		e.metrics.rejected(reason)
	}
	return e.result(ti, status, nil, reason+": "+detail, clock())
}

// result makes ti's result at event time now (its completed_at_ms and its envelope's
// event_time_ms), bound to ti (intent_digest) and signed with the keyring's active
// key; without a keyring it is bound but unsigned.
func (e *Effector) result(ti *pb.ToolIntent, status pb.ToolResult_Status, payload []byte, msg string, now int64) Outcome {
	r := &pb.ToolResult{
		IntentId: ti.GetIntentId(), EntityKey: ti.GetEntityKey(), Seq: ti.GetSeq(), Status: status,
		Payload: payload, ErrorMessage: msg, CompletedAtMs: now,
	}
	if e.o.Keyring != nil {
		// Signing with the active key of a valid keyring cannot fail.
		_ = intent.SignResult(r, ti, e.o.Keyring)
	} else {
		r.IntentDigest, _ = intent.Digest(ti)
	}
	return Outcome{Envelope: &pb.AgentEnvelope{
		EntityKey:   ti.GetEntityKey(),
		EventTimeMs: now,
		Payload:     &pb.AgentEnvelope_ToolResult{ToolResult: r},
	}}
}
