package effector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// ServiceOptions configure the effector as a Pub/Sub service.
type ServiceOptions struct {
	// Subscription delivers ToolIntents (projects/P/subscriptions/S): binary, or protojson
	// with a content-type attribute of application/json, as the pipeline publishes them.
	Subscription string
	// ResultsTopic receives ToolResult and Approval envelopes (projects/P/topics/T), binary,
	// with the entity key as ordering key and an envelope_id attribute the pipeline's
	// duplicate-delivery step recognizes.
	ResultsTopic string
	// MaxMessages per Pull; default 100. Workers bounds intents handled at once; default 64.
	MaxMessages, Workers int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Serve pulls intents from the subscription until ctx ends. Each message is acknowledged
// only after its result is published; an intent another effector holds (or a store failure)
// is handed back for redelivery (ack deadline 0). A message that is not an intent is counted
// as malformed, logged with its message id and acknowledged: it has no intent id to answer.
// APPROVAL intents are acknowledged when listed: the runtime re-emits them at each
// escalation, so an effector that restarts lists them again. Decisions made in the console
// are published on the results topic.
func (e *Effector) Serve(ctx context.Context, client *pubsub.Client, o ServiceOptions) error {
	if _, err := wire.ParseSubscription(o.Subscription); err != nil {
		return &Error{Code: CodeConfig, Detail: "input subscription", Err: err}
	}
	if _, err := wire.ParseTopic(o.ResultsTopic); err != nil {
		return &Error{Code: CodeConfig, Detail: "results topic", Err: err}
	}
	if o.MaxMessages <= 0 {
		o.MaxMessages = 100
	}
	if o.Workers <= 0 {
		o.Workers = 64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	pub := client.Publisher(o.ResultsTopic)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	publish := func(ctx context.Context, env *pb.AgentEnvelope, id string) error {
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(env)
		if err != nil {
			return err
		}
		res := pub.Publish(ctx, &pubsub.Message{
			Data:        b,
			OrderingKey: wire.OrderingKey(env.GetEntityKey()),
			Attributes: map[string]string{
				wire.AttrType: "beam_agents.v1.AgentEnvelope", wire.AttrContentType: wire.ContentTypeProto,
				wire.DefaultEnvelopeIDAttribute: id,
			},
		})
		_, err = res.Get(ctx)
		if err != nil {
			pub.ResumePublish(wire.OrderingKey(env.GetEntityKey()))
		}
		return err
	}
	e.approvals.SetSink(func(ctx context.Context, env *pb.AgentEnvelope) error {
		return publish(ctx, env, "approval:"+env.GetApproval().GetIntentId())
	})
	sem := make(chan struct{}, o.Workers)
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		resp, err := client.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: o.Subscription, MaxMessages: int32(o.MaxMessages)})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			o.Logger.Warn("effector: pull failed", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for _, rm := range resp.GetReceivedMessages() {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				e.serveOne(ctx, client, o, rm, publish)
			}()
		}
	}
	return nil
}

func (e *Effector) serveOne(ctx context.Context, client *pubsub.Client, o ServiceOptions, rm *pubsubpb.ReceivedMessage, publish func(context.Context, *pb.AgentEnvelope, string) error) {
	m := rm.GetMessage()
	ack := func() {
		client.SubscriptionAdminClient.Acknowledge(context.WithoutCancel(ctx), &pubsubpb.AcknowledgeRequest{Subscription: o.Subscription, AckIds: []string{rm.GetAckId()}})
	}
	nack := func() {
		client.SubscriptionAdminClient.ModifyAckDeadline(context.WithoutCancel(ctx), &pubsubpb.ModifyAckDeadlineRequest{Subscription: o.Subscription, AckIds: []string{rm.GetAckId()}, AckDeadlineSeconds: 0})
	}
	ti, err := decodeIntentMessage(m)
	if err != nil {
		e.metrics.add(CountMalformed, 1)
		o.Logger.Error("effector: message is not a ToolIntent; acknowledged", "message_id", m.GetMessageId(), "err", err)
		ack()
		return
	}
	hctx, cancel := context.WithTimeout(ctx, e.o.Lease+e.o.ToolTimeout)
	defer cancel()
	var emitted time.Time // the publish time: the intent's emission
	if pt := m.GetPublishTime(); pt != nil && pt.IsValid() {
		emitted = pt.AsTime()
	}
	out, err := e.HandleEmitted(hctx, ti, emitted)
	if errors.Is(err, ErrShadowIntent) {
		// Never to run, here or on a redelivery: dropped (refuseShadow logged it).
		ack()
		return
	}
	if err != nil {
		o.Logger.Warn("effector: intent handed back for redelivery", "intent_id", ti.GetIntentId(), "err", err)
		nack()
		return
	}
	if out.Envelope != nil {
		if err := publish(ctx, out.Envelope, "result:"+ti.GetIntentId()); err != nil {
			o.Logger.Warn("effector: result not published; intent handed back", "intent_id", ti.GetIntentId(), "err", err)
			nack()
			return
		}
	}
	ack()
}

func decodeIntentMessage(m *pubsubpb.PubsubMessage) (*pb.ToolIntent, error) {
	ti := &pb.ToolIntent{}
	var err error
	if wire.IsJSON(m.GetAttributes()) {
		err = protojson.Unmarshal(m.GetData(), ti)
	} else {
		err = proto.Unmarshal(m.GetData(), ti)
	}
	if err != nil {
		return nil, &Error{Code: CodeInput, Detail: fmt.Sprintf("message %s", m.GetMessageId()), Err: err}
	}
	if t := m.GetAttributes()[wire.AttrType]; t != "" && t != string(intentType) {
		return nil, &Error{Code: CodeInput, Detail: fmt.Sprintf("message %s has type %q", m.GetMessageId(), t)}
	}
	return ti, nil
}
