package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/statecodec"
)

func (b *batch) activate(ctx context.Context, env *pb.AgentEnvelope) (*call, error) {
	c := b.newCall(ctx, env.GetEntityKey(), env.GetEventTimeMs())
	c.input = env
	if err := checkEnvelope(env); err != nil {
		c.res.DeadLetters = append(c.res.DeadLetters, c.deadLetter(err))
		return c, err
	}
	var err error
	switch p := env.GetPayload().(type) {
	case *pb.AgentEnvelope_ExportRequest:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.export(v, out, p.ExportRequest) })
	case *pb.AgentEnvelope_ExternalEvent:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.external(v, out, env) })
	case *pb.AgentEnvelope_ToolResult:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.toolResult(v, out, p.ToolResult) })
	case *pb.AgentEnvelope_Approval_:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.approval(v, out, p.Approval) })
	case *pb.AgentEnvelope_Signal_:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.signal(v, out, env) })
	}
	if err == nil {
		c.drainInbox()
	}
	if _, export := env.GetPayload().(*pb.AgentEnvelope_ExportRequest); err == nil && !export {
		c.armTTL(env.GetEventTimeMs())
	}
	return c, err
}

func (b *batch) fire(ctx context.Context, entity []byte, tag string, atMs int64) (*call, error) {
	c := b.newCall(ctx, entity, atMs)
	var err error
	switch tag {
	case hostapi.TagDeadline:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.deadline(v, out) })
		if err == nil {
			c.drainInbox()
		}
	case hostapi.TagTTL:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error { return c.idle(v) })
	default:
		err = fail(records.ReasonInternalPanic, nil, "unknown timer tag %q", tag)
		c.res.DeadLetters = append(c.res.DeadLetters, deadLetterOf(entity, atMs, err))
	}
	return c, err
}

// call is one invocation of the core: a sequence of atomic activations over the same key.
type call struct {
	a      *Agent
	ctx    context.Context
	deps   hostapi.Deps
	entity []byte
	now    int64
	cells  cells
	res    *hostapi.Result
	// input is the envelope being activated (nil for a timer firing); snapshot is the snapshot
	// being restored. A dead letter of the call carries it, so it can be redriven.
	input    *pb.AgentEnvelope
	snapshot *pb.StateSnapshot
	// route is the canary of the batch's agent, nil for none: a is then the agent of the
	// key's activation (canary.go).
	route *route
}

func (b *batch) newCall(ctx context.Context, entity []byte, now int64) *call {
	c := &call{a: b.a, ctx: ctx, deps: b.deps, entity: entity, now: now, cells: cells{batch: b}, res: &hostapi.Result{}, route: b.a.canary}
	c.routeCall()
	return c
}

// atomic runs fn over a fresh view of the committed state. On success the view's changes join
// the committed overlay and fn's outputs join the result; on failure (an error or a panic)
// nothing of fn survives but one dead letter and the ERROR events of model calls a circuit
// breaker refused.
func (c *call) atomic(fn func(v *view, out *hostapi.Outputs) error) (err error) {
	v := newView(&c.cells, c.a.limits)
	var out hostapi.Outputs
	err = protect(func() error { return fn(v, &out) })
	var st statecodec.Stats
	if err == nil {
		st, err = v.commit()
	}
	if err != nil {
		c.res.DeadLetters = append(c.res.DeadLetters, c.deadLetter(err))
		c.res.Traces = appendRefusals(c.res.Traces, out.Traces)
		return err
	}
	c.res.Outputs = appendOutputs(c.res.Outputs, out)
	c.res.Stats.Add(st)
	return nil
}

// protect turns a panic in fn (user code: a prompt builder, a model) into internal_panic.
func protect(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			// The panic value only: a stack trace would differ between runs, and a retry must
			// emit the same bytes.
			err = &Error{Reason: records.ReasonInternalPanic, Detail: fmt.Sprint(r)}
		}
	}()
	return fn()
}

func appendOutputs(a, b hostapi.Outputs) hostapi.Outputs {
	if empty(&a) {
		return b // the usual call: one atomic step with outputs
	}
	a.Intents = append(a.Intents, b.Intents...)
	a.Traces = append(a.Traces, b.Traces...)
	a.Finals = append(a.Finals, b.Finals...)
	a.Snapshots = append(a.Snapshots, b.Snapshots...)
	a.DeadLetters = append(a.DeadLetters, b.DeadLetters...)
	return a
}

func empty(o *hostapi.Outputs) bool {
	return len(o.Intents)+len(o.Traces)+len(o.Finals)+len(o.Snapshots)+len(o.DeadLetters) == 0
}

func (c *call) armTTL(eventMs int64) {
	if ttl := c.a.limits.IdleTTLMs; ttl > 0 {
		c.res.Timers = append(c.res.Timers, hostapi.TimerOp{Tag: hostapi.TagTTL, Set: true, AtMs: eventMs + ttl})
	}
}

// finish completes the result: the committed writes, the cells read, and the deadline timer
// when the call moved the key's deadline.
func (c *call) finish() *hostapi.Result {
	c.res.Writes = c.cells.writes()
	c.res.Reads = c.cells.reads
	if c.cells.wrote.has(contCell) {
		after := c.cells.overlay[contCell]
		before, _ := c.cells.initial(contCell)
		opts := statecodec.ContinuationOptions{Schema: c.a.schema}
		if d0, d1 := deadlineOf(opts, before), deadlineOf(opts, after); d0 != d1 {
			op := hostapi.TimerOp{Tag: hostapi.TagDeadline}
			if d1 != 0 {
				op.Set, op.AtMs = true, d1
			}
			c.res.Timers = append([]hostapi.TimerOp{op}, c.res.Timers...)
		}
	}
	return c.res
}

// deadlineOf reads the deadline of a committed continuation cell; 0 when not suspended. The
// cell was decoded successfully during the call, so errors cannot occur here.
func deadlineOf(opts statecodec.ContinuationOptions, b []byte) int64 {
	cont, err := opts.Decode(b)
	if err != nil || cont == nil {
		return 0
	}
	return cont.DeadlineMs()
}

// checkEnvelope refuses an envelope that is not actionable (records.CheckEnvelope) with
// reason envelope_invalid.
func checkEnvelope(env *pb.AgentEnvelope) error {
	var e *records.Error
	if errors.As(records.CheckEnvelope(env), &e) {
		return fail(records.ReasonEnvelopeInvalid, e.Err, "%s", e.Detail)
	}
	return nil
}

// external runs a new activation for an external event, or queues the event while the key is
// suspended.
func (c *call) external(v *view, out *hostapi.Outputs, env *pb.AgentEnvelope) error {
	if err := v.need(contCell); err != nil {
		return err
	}
	if v.cont != nil {
		return c.enqueue(v, env)
	}
	if err := v.need(seqCell); err != nil {
		return err
	}
	return c.startActivation(v, out, env)
}

func (c *call) enqueue(v *view, env *pb.AgentEnvelope) error {
	if err := v.need(inboxCell); err != nil {
		return err
	}
	if len(v.inbox.Envelopes) >= c.a.limits.MaxInbox {
		return fail(records.ReasonInboxFull, nil, "%d events already wait for the key to resume", len(v.inbox.Envelopes))
	}
	v.inbox.Envelopes = append(v.inbox.Envelopes, proto.CloneOf(env))
	v.touch(inboxCell)
	return nil
}

// drainInbox runs the queued external events, oldest first, while the key is not suspended;
// with Definition.Burst the events that form a burst with the oldest run with it (inboxBurst).
// Each event leaves the inbox in its own atomic step, so a failing event becomes a dead
// letter instead of blocking the key. Signals still queued when the key is not suspended
// waited behind an activation that has ended without taking them: they leave the inbox as
// signal_unawaited dead letters before the next event runs.
func (c *call) drainInbox() {
	// Events are queued only while the key is suspended, so a key that was not suspended
	// when the call began has an empty inbox: no need to read it.
	if before, err := c.cells.initial(contCell); err != nil || len(before) == 0 {
		return
	}
	for {
		var next *pb.AgentEnvelope
		var signals, more []*pb.AgentEnvelope
		err := c.atomic(func(v *view, _ *hostapi.Outputs) error {
			if err := v.need(contCell); err != nil || v.cont != nil {
				return err
			}
			if err := v.need(inboxCell); err != nil || len(v.inbox.Envelopes) == 0 {
				return err
			}
			rest := make([]*pb.AgentEnvelope, 0, len(v.inbox.Envelopes))
			for _, env := range v.inbox.Envelopes {
				switch {
				case env.GetSignal() != nil:
					signals = append(signals, env)
				case next == nil:
					next = env
				default:
					rest = append(rest, env)
				}
			}
			more, rest = c.inboxBurst(next, rest)
			v.inbox.Envelopes = rest
			v.touch(inboxCell)
			return nil
		})
		if err != nil {
			return
		}
		c.unawaitedLetters(signals)
		if next == nil {
			return
		}
		trigger := c.input
		c.input = next
		err = c.atomic(func(v *view, out *hostapi.Outputs) error {
			if err := v.need(seqCell, contCell); err != nil {
				return err
			}
			return c.startActivation(v, out, next, more...)
		})
		c.burstLetters(err, more)
		c.input = trigger
	}
}

// export emits the key's state as committed, blobs verbatim: no migration, no reordering.
func (c *call) export(v *view, out *hostapi.Outputs, req *pb.AgentEnvelope_StateExportRequest) error {
	snap := &pb.StateSnapshot{StateSchemaVersion: 1, EntityKey: c.entity, SnapshotAtMs: c.now, RequestId: req.GetRequestId()}
	var raw [numCells][]byte
	for _, cell := range []cell{seqCell, memoryCell, cacheCell, contCell, pendingCell, inboxCell} {
		b, err := v.raw(cell)
		if err != nil {
			return err
		}
		raw[cell] = b
	}
	seq, err := statecodec.DecodeSeq(raw[seqCell])
	if err != nil {
		return stateErr(err)
	}
	snap.Seq = seq
	blob := func(c cell, dst proto.Message) error {
		if err := proto.Unmarshal(raw[c], dst); err != nil {
			return stateErr(&statecodec.Error{Code: statecodec.CodeCorrupt, Cell: cellTable[c].id, Err: err})
		}
		return nil
	}
	if len(raw[memoryCell]) > 0 {
		snap.Memory = &pb.MemoryBlob{}
		if err := blob(memoryCell, snap.Memory); err != nil {
			return err
		}
	}
	if len(raw[cacheCell]) > 0 {
		snap.LlmCache = &pb.LlmCacheBlob{}
		if err := blob(cacheCell, snap.LlmCache); err != nil {
			return err
		}
	}
	if len(raw[contCell]) > 0 {
		snap.Continuation = &pb.Continuation{}
		if err := blob(contCell, snap.Continuation); err != nil {
			return err
		}
	}
	pending, err := statecodec.DecodePending(raw[pendingCell])
	if err != nil {
		return stateErr(err)
	}
	snap.Pending = slices.Collect(pending.All())
	if len(raw[inboxCell]) > 0 {
		inbox := &pb.AgentInbox{}
		if err := blob(inboxCell, inbox); err != nil {
			return err
		}
		snap.Inbox = inbox.GetEnvelopes()
	}
	out.Snapshots = append(out.Snapshots, snap)
	return nil
}
