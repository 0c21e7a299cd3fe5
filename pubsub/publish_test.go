package pubsub_test

import (
	"context"
	"testing"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
)

// A publish error fails the bundle rather than dropping the output silently: a runner that
// retries bundles (Dataflow) publishes again; Prism does not retry, so the job fails. (The
// input was acknowledged when the reader's bundle committed; on Prism that commit is not
// durable, so the failed job's in-flight work is lost with it: see docs/pubsub.md.)
func TestPublishErrorFailsTheBundle(t *testing.T) {
	e := newEnv(t)
	o := e.options(t, writeKeyring(t))
	o.Agent = quickAgent
	publishFaults.topic.Store(e.finals)
	defer publishFaults.topic.Store("")
	id := e.publish(marshal(t, &pb.AgentEnvelope{EntityKey: []byte("pub-err"), EventTimeMs: time.Now().UnixMilli(),
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hello")}}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := pipeline.Run(ctx, "prism", o); err == nil || ctx.Err() != nil {
		t.Fatalf("Run = %v (context %v), want the job to fail on the publish error", err, ctx.Err())
	}
	if m := srv.Message(id); m.Deliveries == 0 {
		t.Errorf("the input was never pulled")
	}
	if n := len(messages(e.finals)); n != 0 {
		t.Errorf("%d finals published", n)
	}
}
