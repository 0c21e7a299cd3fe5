package devloop

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// ingest publishes events to the input topic, each with event time its arrival (the clock
// read here, at ingestion: never in an activation), strictly increasing.
type ingest struct {
	client  *pubsub.Client
	topic   string
	keyring *intent.Keyring // signs signals
	mu      sync.Mutex
	last    int64
	closed  atomic.Bool
	pub     *pubsub.Publisher
}

// event publishes an event and waits until it is accepted (the console's Ingest).
func (in *ingest) event(ctx context.Context, key, body []byte) (int64, error) {
	at, res, err := in.publish(ctx, key, body)
	if err != nil {
		return 0, err
	}
	return at, in.wait(ctx, key, res)
}

// signal publishes a signal like an event: sent at its event time, signed with dev's keyring.
func (in *ingest) signal(ctx context.Context, sig *pb.AgentEnvelope_Signal) (int64, error) {
	key := sig.GetEntityKey()
	at, res, err := in.publishEnvelope(ctx, key, func(at int64) *pb.AgentEnvelope {
		sig.SentAtMs = at
		// Signing with the active key of a valid keyring cannot fail.
		_ = intent.SignSignal(sig, in.keyring)
		return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_Signal_{Signal: sig}}
	}, "signal:"+sig.GetSignalId())
	if err != nil {
		return 0, err
	}
	return at, in.wait(ctx, key, res)
}

// wait waits until the event published as res is accepted.
func (in *ingest) wait(ctx context.Context, key []byte, res *pubsub.PublishResult) error {
	if _, err := res.Get(ctx); err != nil {
		in.mu.Lock()
		if in.pub != nil {
			in.pub.ResumePublish(wire.OrderingKey(key))
		}
		in.mu.Unlock()
		return &console.Error{Code: console.CodeIngest, Detail: "publishing the event", Err: err}
	}
	return nil
}

// publish publishes one event without waiting for it to be accepted (wait does): a batch of
// events travels at once.
func (in *ingest) publish(ctx context.Context, key, body []byte) (int64, *pubsub.PublishResult, error) {
	return in.publishEnvelope(ctx, key, func(at int64) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: body}}
	}, "event:"+RandomHex(12))
}

// publishEnvelope publishes the envelope of key that envelope makes for its event time, under
// the envelope id id.
func (in *ingest) publishEnvelope(ctx context.Context, key []byte, envelope func(at int64) *pb.AgentEnvelope, id string) (int64, *pubsub.PublishResult, error) {
	if in.closed.Load() {
		return 0, nil, &console.Error{Code: console.CodeUnavailable, Detail: "dev is stopping: it takes no more events"}
	}
	in.mu.Lock()
	at := max(time.Now().UnixMilli(), in.last+1)
	in.last = at
	if in.pub == nil {
		in.pub = in.client.Publisher(in.topic)
		in.pub.EnableMessageOrdering = true
	}
	pub := in.pub
	in.mu.Unlock()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(envelope(at))
	if err != nil {
		return 0, nil, err
	}
	res := pub.Publish(ctx, &pubsub.Message{Data: b, OrderingKey: wire.OrderingKey(key), Attributes: map[string]string{
		wire.AttrType: "beam_agents.v1.AgentEnvelope", wire.AttrContentType: wire.ContentTypeProto,
		wire.DefaultEnvelopeIDAttribute: id,
	}})
	return at, res, nil
}

func (in *ingest) stop() {
	in.closed.Store(true)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.pub != nil {
		in.pub.Stop()
		in.pub = nil
	}
}
