package console

import (
	"context"
	"log/slog"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
)

// Subscriber ingests an output topic's messages into a store through a subscription:
// unary pulls, each batch committed to the store before it is acknowledged, so a message
// is ingested at least once and, being named by its content, counted once.
type Subscriber struct {
	Store        *Store
	Client       *pubsub.Client
	Subscription string // projects/P/subscriptions/S
	Logger       *slog.Logger
}

// Run pulls until ctx ends.
func (s *Subscriber) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		if _, err := s.PullOnce(ctx); err != nil && ctx.Err() == nil {
			s.logger().Warn("console: pulling", "subscription", s.Subscription, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}

func (s *Subscriber) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// PullOnce pulls one batch (waiting up to a few seconds for one), ingests and acknowledges
// it, and returns how many records it added.
func (s *Subscriber) PullOnce(ctx context.Context) (int, error) {
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := s.Client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: s.Subscription, MaxMessages: 1000})
	cancel()
	if err != nil {
		if pctx.Err() != nil && ctx.Err() == nil {
			return 0, nil // nothing arrived in time
		}
		return 0, err
	}
	msgs := resp.GetReceivedMessages()
	if len(msgs) == 0 {
		return 0, nil
	}
	recs := make([]Record, 0, len(msgs))
	ids := make([]string, 0, len(msgs))
	for _, rm := range msgs {
		recs = append(recs, MessageRecord(rm.GetMessage()))
		ids = append(ids, rm.GetAckId())
	}
	added, _, err := s.Store.Ingest("", Offset{}, recs)
	if err != nil {
		return 0, err // not acknowledged: redelivered after the ack deadline
	}
	return added, s.Client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: s.Subscription, AckIds: ids})
}

// MessageRecord is the record an output message carries, by its type attribute: binary
// data, or protojson when its content type says so. A rejected input on the errors topic
// becomes the dead letter it stands for, its bytes as the raw record. A message of no known
// type is a record of no kind (counted as malformed).
func MessageRecord(m *pubsubpb.PubsubMessage) Record {
	attrs := m.GetAttributes()
	typ := attrs[wire.AttrType]
	if typ == wire.TypeRejectedInput {
		d := &pb.ActivationErrorRecord{Reason: attrs[wire.AttrReason], Detail: attrs[wire.AttrDetail],
			FailedInput: &pb.ActivationErrorRecord_RawRecord{RawRecord: m.GetData()}}
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(d)
		dead, _ := records.KindOf(records.OutDeadLetter)
		return Record{Kind: dead, Data: b}
	}
	kind, ok := records.KindOfType(protoreflect.FullName(typ))
	if !ok {
		return Record{Data: append([]byte("unknown type "+typ+":"), m.GetData()...)}
	}
	if !wire.IsJSON(attrs) {
		return Record{Kind: kind, Data: m.GetData()}
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(typ))
	if err != nil {
		return Record{Data: m.GetData()}
	}
	msg := mt.New().Interface()
	if protojson.Unmarshal(m.GetData(), msg) != nil {
		return Record{Data: append([]byte("bad json:"), m.GetData()...)}
	}
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	return Record{Kind: kind, Data: b}
}
