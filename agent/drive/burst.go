package drive

import (
	"context"
	"strconv"

	"github.com/beamagents/beamagents/agent/burst"
	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// burstTagPrefix starts the tag of a burst timer; the rest is the last millisecond of the
// burst's window.
const burstTagPrefix = "burst:"

// BurstTag is the timer tag that wakes a key when the burst window ending at endMs (its last
// millisecond) has passed the watermark.
func BurstTag(endMs int64) string { return burstTagPrefix + strconv.FormatInt(endMs, 10) }

// burstEnd is the last millisecond of the window of a burst that env begins, and whether env
// begins one: an actionable external event of an agent with bursts (burst.Rule). An envelope
// the core would refuse runs on its own, to its dead letter.
func burstEnd(b burst.Rule, env *pb.AgentEnvelope) (int64, bool) {
	if !b.On() {
		return 0, false
	}
	if _, ok := env.GetPayload().(*pb.AgentEnvelope_ExternalEvent); !ok || records.CheckEnvelope(env) != nil {
		return 0, false
	}
	return env.GetEventTimeMs() + b.WindowMs() - 1, true
}

// gatherDue takes the burst that due[0] begins out of due (in processing order): the due
// external events that join it (burst.Rule.Joins), and the envelopes left, in order.
func gatherDue(b burst.Rule, due []bufferedEnv) (gathered []*pb.AgentEnvelope, left []bufferedEnv) {
	first := due[0].Env
	gathered = []*pb.AgentEnvelope{first}
	size := len(first.GetExternalEvent())
	for _, d := range due[1:] {
		if records.CheckEnvelope(d.Env) == nil && b.Joins(first.GetEventTimeMs(), len(gathered), size, d.Env) {
			gathered = append(gathered, d.Env)
			size += len(d.Env.GetExternalEvent())
			continue
		}
		left = append(left, d)
	}
	return gathered, left
}

// activateBurst runs a burst in batch b, through Around when set.
func (c Core) activateBurst(ctx context.Context, b host.Batch, envs []*pb.AgentEnvelope) *host.Result {
	if len(envs) == 1 {
		return c.activate(ctx, b, envs[0])
	}
	run := func() *host.Result {
		res, _ := b.ActivateBurst(ctx, envs) // a failure is a dead letter in res
		return res
	}
	if c.Around == nil {
		return run()
	}
	return c.Around(run)
}
