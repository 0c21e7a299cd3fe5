package drive

import (
	"context"
	"maps"
	"slices"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

// State is a key's committed state during a firing: the core reads it, and each result's
// writes are applied before the next input, so every input sees its predecessors' changes.
type State interface {
	agent.Store
	Apply(*agent.Result)
}

// Timers are a key's armed core timers (agent.TagDeadline, agent.TagTTL): event time by tag.
type Timers map[string]int64

func (t Timers) tags() []string { return slices.Sorted(maps.Keys(t)) }

// Clone returns a copy of t.
func (t Timers) Clone() Timers { return maps.Clone(t) }

// apply records a result's timer operations; a timer is never armed before now.
func (t Timers) apply(ops []agent.TimerOp, now int64) {
	for _, op := range ops {
		if op.Set {
			t[op.Tag] = max(op.AtMs, now)
		} else {
			delete(t, op.Tag)
		}
	}
}

// next returns the earliest armed timer at or before atMs; equal times fire deadline before
// ttl (tag order).
func (t Timers) next(atMs int64) (tag string, at int64, ok bool) {
	for _, g := range t.tags() {
		if v := t[g]; v <= atMs && (!ok || v < at) {
			tag, at, ok = g, v, true
		}
	}
	return tag, at, ok
}

// Changes lists the Beam timer operations that take a key's timers from before to after, in
// tag order.
func Changes(before, after Timers) []agent.TimerOp {
	var ops []agent.TimerOp
	for _, tag := range slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for k := range before {
			yield(k, true)
		}
		for k := range after {
			yield(k, true)
		}
	}))) {
		b, had := before[tag]
		a, has := after[tag]
		switch {
		case has && (!had || a != b):
			ops = append(ops, agent.TimerOp{Tag: tag, Set: true, AtMs: a})
		case had && !has:
			ops = append(ops, agent.TimerOp{Tag: tag})
		}
	}
	return ops
}

// Core is what a firing calls: the agent and its per-worker dependencies.
type Core struct {
	Agent *agent.Agent
	Deps  agent.Deps
}

// Firing runs one firing of a key at event time atMs: the due envelopes (in the order
// SortDue gives) interleaved with the key's core timers that fall due at or before atMs,
// each timer fired at its own event time. An envelope goes before a timer at the same time;
// a timer a result arms at or before atMs fires within the same firing. Every result goes to
// sink in order, after its writes are applied to st; timers ends holding the timers still
// armed, all after atMs.
func (c Core) Firing(ctx context.Context, st State, key []byte, due []Buffered, timers Timers, atMs int64, sink func(*agent.Result)) {
	for i := 0; ; {
		tag, at, ok := timers.next(atMs)
		if i < len(due) && (!ok || due[i].Env.GetEventTimeMs() <= at) {
			env := due[i].Env
			i++
			res, _ := c.Agent.Activate(ctx, st, env, c.Deps) // a failure is a dead letter in res
			c.commit(st, timers, res, env.GetEventTimeMs(), sink)
			continue
		}
		if !ok {
			return
		}
		delete(timers, tag)
		res, _ := c.Agent.Fire(ctx, st, key, tag, at, c.Deps)
		c.commit(st, timers, res, at, sink)
	}
}

// Restore restores snap into the key (agent.Restore) and arms the timers its result asks for.
func (c Core) Restore(ctx context.Context, st State, snap *pb.StateSnapshot, timers Timers, sink func(*agent.Result)) {
	res, _ := c.Agent.Restore(ctx, st, snap)
	st.Apply(res)
	for _, op := range res.Timers {
		if op.Set {
			timers[op.Tag] = op.AtMs
		}
	}
	sink(res)
}

func (c Core) commit(st State, timers Timers, res *agent.Result, now int64, sink func(*agent.Result)) {
	st.Apply(res)
	timers.apply(res.Timers, now)
	sink(res)
}
