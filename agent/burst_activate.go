package agent

import (
	"context"

	"github.com/beamagents/beamagents/agent/internal/hostapi"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// ActivateBurst runs the external events of one burst, in processing order, as one activation
// (host.Batch.ActivateBurst).
func (b *batch) ActivateBurst(ctx context.Context, envs []*pb.AgentEnvelope) (*hostapi.Result, error) {
	return b.end(b.activateBurst(ctx, envs))
}

// activateBurst runs envs as one activation at the key's seq, in place of the first: its
// journal keeps the first as the trigger and the others as its burst, so a resumed activation
// sees the same events. A key that is suspended queues each event in the inbox on its own, as
// activate does, and the drain after its resumption gathers them again (inboxBurst). A failed
// burst commits nothing and dead-letters each of its events, each with its envelope.
func (b *batch) activateBurst(ctx context.Context, envs []*pb.AgentEnvelope) (*call, error) {
	if len(envs) <= 1 {
		if len(envs) == 0 {
			return b.newCall(ctx, nil, 0), nil
		}
		return b.activate(ctx, envs[0])
	}
	first, more := envs[0], envs[1:]
	c := b.newCall(ctx, first.GetEntityKey(), first.GetEventTimeMs())
	c.input = first
	if err := checkBurst(envs); err != nil {
		c.res.DeadLetters = append(c.res.DeadLetters, c.deadLetter(err))
		c.burstLetters(err, more)
		return c, err
	}
	var suspended bool
	err := c.atomic(func(v *view, _ *hostapi.Outputs) error {
		err := v.need(contCell)
		suspended = v.cont != nil
		return err
	})
	switch {
	case err != nil:
		c.burstLetters(err, more)
	case suspended:
		for _, env := range envs {
			c.input = env
			c.atomic(func(v *view, _ *hostapi.Outputs) error { return c.enqueue(v, env) })
		}
		c.input = first
	default:
		err = c.atomic(func(v *view, out *hostapi.Outputs) error {
			if err := v.need(seqCell); err != nil {
				return err
			}
			return c.startActivation(v, out, first, more...)
		})
		c.burstLetters(err, more)
		if err == nil {
			c.drainInbox()
		}
	}
	if err == nil {
		c.armTTL(envs[len(envs)-1].GetEventTimeMs())
	}
	return c, err
}

// checkBurst refuses a burst of which an event is not an actionable external event of the
// first one's key, or is out of processing order.
func checkBurst(envs []*pb.AgentEnvelope) error {
	for i, env := range envs {
		if err := checkEnvelope(env); err != nil {
			return err
		}
		if _, ok := env.GetPayload().(*pb.AgentEnvelope_ExternalEvent); !ok {
			return fail(records.ReasonEnvelopeInvalid, nil, "event %d of a burst is not an external event", i)
		}
		if i > 0 && (string(env.GetEntityKey()) != string(envs[0].GetEntityKey()) || env.GetEventTimeMs() < envs[i-1].GetEventTimeMs()) {
			return fail(records.ReasonEnvelopeInvalid, nil, "event %d of a burst is of another key or out of order", i)
		}
	}
	return nil
}

// burstLetters adds the dead letters of a failed burst's further events (the first one's is
// the call's own): each carries its envelope, so each can be processed again.
func (c *call) burstLetters(err error, more []*pb.AgentEnvelope) {
	if err == nil {
		return
	}
	for _, env := range more {
		d := deadLetterOf(c.entity, c.now, err)
		records.WithEnvelope(d, env)
		c.res.DeadLetters = append(c.res.DeadLetters, d)
	}
}

// inboxBurst gathers the queued external events that run with next, the oldest one, under
// Definition.Burst (burst.Rule.Gather over the inbox's order): the burst's further events,
// and the events left queued. Without bursts nothing joins next.
func (c *call) inboxBurst(next *pb.AgentEnvelope, rest []*pb.AgentEnvelope) (more, left []*pb.AgentEnvelope) {
	r := c.a.Burst()
	if next == nil || !r.On() || len(rest) == 0 {
		return nil, rest
	}
	gathered, left := r.Gather(append([]*pb.AgentEnvelope{next}, rest...))
	return gathered[1:], left
}
