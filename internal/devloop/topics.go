package devloop

import (
	"context"
	"strings"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	bapubsub "github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/records"
)

// topics are the loop's Pub/Sub names on the in-process emulator.
type topics struct {
	events, eventsSub, intents, intentsSub, finals, finalsSub, errors, errorsSub, traces, tracesSub string
	consoleSubs                                                                                     []string // the console's own, one per output topic
}

func newTopics(ctx context.Context, srv *pstest.Server) (topics, error) {
	const p = "projects/beamagents-demo"
	t := topics{
		events: p + "/topics/events", eventsSub: p + "/subscriptions/pipeline",
		intents: p + "/topics/intents", intentsSub: p + "/subscriptions/effector",
		finals: p + "/topics/finals", finalsSub: p + "/subscriptions/finals",
		errors: p + "/topics/errors", errorsSub: p + "/subscriptions/errors",
		traces: p + "/topics/traces", tracesSub: p + "/subscriptions/watch-traces",
	}
	subs := map[string]string{t.events: t.eventsSub, t.intents: t.intentsSub, t.finals: t.finalsSub, t.errors: t.errorsSub}
	for _, topic := range []string{t.intents, t.finals, t.errors, t.traces} {
		t.consoleSubs = append(t.consoleSubs, p+"/subscriptions/console-"+topic[strings.LastIndex(topic, "/")+1:])
	}
	for topic, sub := range subs {
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			return t, err
		}
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 30}); err != nil {
			return t, err
		}
	}
	for _, sub := range t.consoleSubs {
		topic := p + "/topics/" + strings.TrimPrefix(sub, p+"/subscriptions/console-")
		if topic == t.traces {
			if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
				return t, err
			}
		}
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 30}); err != nil {
			return t, err
		}
	}
	// The terminal's: one line per activation attempt, in each key's order.
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: t.tracesSub, Topic: t.traces, AckDeadlineSeconds: 30, EnableMessageOrdering: true}); err != nil {
		return t, err
	}
	return t, nil
}

// waitConsumed waits until every message published to topic is acknowledged (the pipeline's
// reader acknowledges a message once the bundle holding it committed), for at most within.
func waitConsumed(srv *pstest.Server, topic string, within time.Duration) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		open := 0
		for _, m := range srv.Messages() {
			if m.Topic == topic && m.Acks == 0 {
				open++
			}
		}
		if open == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// republishPending publishes the pending intents of the restored snapshots to the intents
// topic, but those answered by a restored envelope (a result or decision the last run took
// and its key had not run yet). It returns how many it published.
func republishPending(ctx context.Context, client *pubsub.Client, topic, snapshots, envelopes string) (int, error) {
	if snapshots == "" {
		return 0, nil
	}
	snaps, err := records.ReadMessages([]string{snapshots}, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if err != nil {
		return 0, err
	}
	answered := map[string]bool{}
	if envelopes != "" {
		envs, err := records.ReadMessages([]string{envelopes}, func() *pb.AgentEnvelope { return &pb.AgentEnvelope{} })
		if err != nil {
			return 0, err
		}
		for _, env := range envs {
			switch {
			case env.GetToolResult() != nil:
				answered[env.GetToolResult().GetIntentId()] = true
			case env.GetApproval() != nil:
				answered[env.GetApproval().GetIntentId()] = true
			}
		}
	}
	pub := client.Publisher(topic)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	n := 0
	for _, s := range snaps {
		for _, ti := range s.GetPending() {
			if answered[ti.GetIntentId()] {
				continue
			}
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ti)
			if err != nil {
				return n, err
			}
			m, err := bapubsub.OutputMessage(string(ti.ProtoReflect().Descriptor().FullName()), b)
			if err != nil {
				return n, err
			}
			if _, err := pub.Publish(ctx, &pubsub.Message{Data: m.GetData(), Attributes: m.GetAttributes(), OrderingKey: m.GetOrderingKey()}).Get(ctx); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
