package drive

import (
	"context"
	"maps"
	"slices"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// Timers are a key's armed core timers (host.TagDeadline, host.TagTTL): event time by tag.
type Timers map[string]int64

func (t Timers) tags() []string { return slices.Sorted(maps.Keys(t)) }

// Clone returns a copy of t.
func (t Timers) Clone() Timers { return maps.Clone(t) }

// apply records a result's timer operations; a timer is never armed before now.
func (t Timers) apply(ops []host.TimerOp, now int64) {
	for _, op := range ops {
		if op.Set {
			t[op.Tag] = max(op.AtMs, now)
		} else {
			delete(t, op.Tag)
		}
	}
}

// Woken records the Beam timer that woke the key (tag, at). A deadline the buffer does not
// know fires as the core's deadline at its time: a key whose deadline was set only as a Beam
// timer (by a binary from before the buffer kept the core timers) still fails closed, and the
// core ignores a deadline that no longer applies, so a stale Beam firing changes nothing.
func (t Timers) Woken(tag string, at int64) {
	if _, ok := t[tag]; !ok && tag == host.TagDeadline {
		t[tag] = at
	}
}

// next returns the earliest armed timer at or before atMs; equal times fire deadline before
// ttl (tag order).
func (t Timers) next(atMs int64) (tag string, at int64, ok bool) {
	for g, v := range t {
		if v <= atMs && (!ok || v < at || v == at && g < tag) {
			tag, at, ok = g, v, true
		}
	}
	return tag, at, ok
}

// timerChanges lists the Beam timer operations that take a key's timers from before to after, in
// tag order.
func timerChanges(before, after Timers) []host.TimerOp {
	var ops []host.TimerOp
	var buf [8]string // a key has few timers: its order bucket, a deadline, an idle TTL
	tags := buf[:0]
	for k := range before {
		tags = append(tags, k)
	}
	for k := range after {
		if _, dup := before[k]; !dup {
			tags = append(tags, k)
		}
	}
	slices.Sort(tags)
	for _, tag := range tags {
		b, had := before[tag]
		a, has := after[tag]
		switch {
		case has && (!had || a != b):
			ops = append(ops, host.TimerOp{Tag: tag, Set: true, AtMs: a})
		case had && !has:
			ops = append(ops, host.TimerOp{Tag: tag})
		}
	}
	return ops
}

// Core is what a firing calls: the agent and its per-worker dependencies.
type Core struct {
	Agent *agent.Agent
	Deps  host.Deps
	// Around, when set, runs each activation call (a shell's metering); nil runs it directly.
	Around func(activate func() *host.Result) *host.Result
	// OrderResolutionMs is the event-time ordering resolution; 0 or 1 means every distinct
	// event time is its own bucket. Outputs do not depend on it.
	OrderResolutionMs int64
	// Arrival runs each envelope as it arrives, without the ordering buffer
	// (transforms.ArrivalOrder); Driver does not support it.
	Arrival bool
	// Park, for a bounded input that ends at event time EndMs (its last envelope's), parks
	// the keys still waiting at the end instead of failing them closed: a core timer after
	// EndMs never fires, and the first firing after EndMs (one the end of the input alone
	// brings: the final watermark) emits the key's state as a StateSnapshot with request id
	// ParkedRequestID when the key is suspended, and disarms the key's timers. Without Park
	// every timer fires in event time to the end (the fail-closed behaviour). With Arrival, a
	// deadline or TTL firing after EndMs parks the key the same way.
	Park  bool
	EndMs int64
}

// ParkedRequestID is the request id of the StateSnapshot that parks a key still waiting at
// the end of a bounded input (Core.Park): `run --resume` restores exactly these.
const ParkedRequestID = "beamagents.parked"

// limit is the latest event time at which a firing at atMs fires core timers.
func (c Core) limit(atMs int64) int64 {
	if c.Park {
		return min(atMs, c.EndMs)
	}
	return atMs
}

// park is the end of a bounded input for a key that still has core timers armed (all after
// EndMs): a suspended key's state goes out as a parked snapshot, taken at EndMs exactly as an
// export request takes it (blobs verbatim), and the timers are disarmed, so nothing is
// escalated or failed closed and no later firing parks it again. A key that is not suspended
// (only its idle TTL armed) emits nothing. Neither does a firing whose deadline is not the
// suspension's (a stale timer the shell's buffer still held after the key parked on its
// current one): a key parks once.
func (c Core) park(ctx context.Context, b host.Batch, key []byte, timers Timers, sink func(*host.Result)) {
	req := &pb.AgentEnvelope{EntityKey: key, EventTimeMs: c.EndMs, Payload: &pb.AgentEnvelope_ExportRequest{
		ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: ParkedRequestID}}}
	res, _ := b.Activate(ctx, req)
	deadline, armed := timers[host.TagDeadline]
	switch {
	case len(res.DeadLetters) > 0:
		sink(res)
	case len(res.Snapshots) == 1 && res.Snapshots[0].GetContinuation() != nil:
		if !armed || deadline == res.Snapshots[0].GetContinuation().GetDeadlineMs() {
			sink(res)
		}
	}
	clear(timers)
}

// activate runs env in batch b, through Around when set.
func (c Core) activate(ctx context.Context, b host.Batch, env *pb.AgentEnvelope) *host.Result {
	run := func() *host.Result {
		res, _ := b.Activate(ctx, env) // a failure is a dead letter in res
		return res
	}
	if c.Around == nil {
		return run()
	}
	return c.Around(run)
}

// Batch starts the batch of one firing over the key's committed state in store.
func (c Core) Batch(store host.Store) host.Batch { return host.NewBatch(c.Agent, store, c.Deps) }

// Firing runs one firing of a key at event time atMs: the due envelopes (in the order
// sortDue gives) interleaved with the key's core timers that fall due at or before atMs,
// each timer fired at its own event time (with Park, only those due by EndMs). An envelope
// goes before a timer at the same time;
// a timer a result arms at or before atMs fires within the same firing. Every input runs in
// batch b, so each sees what the ones before it committed; every result goes to sink in
// order; timers ends holding the timers still armed, all after atMs.
//
// With the agent's bursts (burst.Rule) an external event begins a burst, which runs as one
// activation in its place once its window has passed (endMs ≤ atMs: every event of the window
// is due). A burst whose window is still open stops the firing there: open is what is left
// of due, from the burst's first event, to keep buffered until the window's end endMs; the
// timers due after the burst's first event stay armed.
func (c Core) Firing(ctx context.Context, b host.Batch, key []byte, due []bufferedEnv, timers Timers, atMs int64, sink func(*host.Result)) (open []bufferedEnv, endMs int64) {
	burst := c.Agent.Burst()
	for i := 0; ; {
		tag, at, ok := timers.next(c.limit(atMs))
		if i < len(due) && (!ok || due[i].Env.GetEventTimeMs() <= at) {
			env := due[i].Env
			if end, begins := burstEnd(burst, env); begins {
				if end > atMs {
					return due[i:], end
				}
				var envs []*pb.AgentEnvelope
				envs, due = gatherDue(burst, due[i:])
				i = 0
				res := c.activateBurst(ctx, b, envs)
				timers.apply(res.Timers, env.GetEventTimeMs())
				sink(res)
				continue
			}
			i++
			res := c.activate(ctx, b, env)
			timers.apply(res.Timers, env.GetEventTimeMs())
			sink(res)
			continue
		}
		if !ok {
			return nil, 0
		}
		delete(timers, tag)
		res, _ := b.Fire(ctx, key, tag, at)
		timers.apply(res.Timers, at)
		sink(res)
	}
}

// Restore restores snap into the key in batch b (host.Batch.Restore) and arms the timers
// its result asks for.
func (c Core) Restore(ctx context.Context, b host.Batch, snap *pb.StateSnapshot, timers Timers, sink func(*host.Result)) {
	res, _ := b.Restore(ctx, snap)
	for _, op := range res.Timers {
		if op.Set {
			timers[op.Tag] = op.AtMs
		}
	}
	sink(res)
}
