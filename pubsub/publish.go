package pubsub

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync/atomic"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/pubsubio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/beamagents/beamagents/pubsub/wire"
)

func init() {
	register.DoFn2x1[context.Context, []byte, error](&publishFn{})
	register.DoFn2x1[[]byte, func(*pubsubpb.PubsubMessage), error](&toMessageFn{})
	register.Emitter1[*pubsubpb.PubsubMessage]()
}

// OutputMessage builds the Pub/Sub message of one output record: data verbatim, ordering key
// from the entity key, and the attributes type, schema_version, content-type, intent_id and
// trace_id (the last two when the message has them). msgType is the record's full protobuf
// name; "" means the record is already a serialized PubsubMessage (a rejected input).
func OutputMessage(msgType string, record []byte) (*pubsubpb.PubsubMessage, error) {
	if msgType == "" {
		m := &pubsubpb.PubsubMessage{}
		if err := proto.Unmarshal(record, m); err != nil {
			return nil, fmt.Errorf("pubsub: a rejected input record does not decode: %w", err)
		}
		return m, nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(msgType))
	if err != nil {
		return nil, err
	}
	msg := mt.New()
	if err := proto.Unmarshal(record, msg.Interface()); err != nil {
		return nil, fmt.Errorf("pubsub: a %s record does not decode: %w", msgType, err)
	}
	attrs := map[string]string{wire.AttrType: msgType, wire.AttrSchemaVersion: wire.SchemaVersion, wire.AttrContentType: wire.ContentTypeProto}
	fields := msg.Descriptor().Fields()
	get := func(name protoreflect.Name) (protoreflect.Value, bool) {
		fd := fields.ByName(name)
		if fd == nil || !msg.Has(fd) {
			return protoreflect.Value{}, false
		}
		return msg.Get(fd), true
	}
	if v, ok := get("intent_id"); ok {
		attrs[wire.AttrIntentID] = v.String()
	}
	if v, ok := get("trace_id"); ok {
		attrs[wire.AttrTraceID] = hex.EncodeToString(v.Bytes())
	}
	out := &pubsubpb.PubsubMessage{Data: record, Attributes: attrs}
	if v, ok := get("entity_key"); ok {
		out.OrderingKey = wire.OrderingKey(v.Bytes())
	}
	return out, nil
}

// Publish publishes col, a PCollection<[]byte> of serialized msgType messages, to topic (a
// full resource name), one message per record (see OutputMessage). Publishing is part of
// the bundle: a bundle finishes only when Pub/Sub accepted every message, and a publish
// error fails it (the runner retries it), so nothing is dropped. msgType "" publishes
// rejected inputs (Source.Rejected) as they came. With o.Native, Beam's pubsubio writes.
func Publish(s beam.Scope, topic string, msgType protoreflect.FullName, col beam.PCollection, o Options) error {
	n, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	s = s.Scope("Publish_" + n.ID)
	if o.Native {
		pubsubio.Write(s, n.Project, n.ID, beam.ParDo(s, &toMessageFn{Type: string(msgType)}, col))
		return nil
	}
	beam.ParDo0(s, &publishFn{Topic: topic, Type: string(msgType), Run: o.Run}, col)
	return nil
}

// PublishRejected publishes rejected inputs (Source.Rejected) to the errors topic.
func PublishRejected(s beam.Scope, topic string, rejected beam.PCollection, o Options) error {
	return Publish(s.Scope("Rejected"), topic, "", rejected, o)
}

type toMessageFn struct{ Type string }

func (f *toMessageFn) ProcessElement(b []byte, emit func(*pubsubpb.PubsubMessage)) error {
	m, err := OutputMessage(f.Type, b)
	if err != nil {
		return err
	}
	emit(m)
	return nil
}

// publishFn publishes with ordering keys; FinishBundle waits for every result.
type publishFn struct {
	Topic, Type, Run string

	client    *pubsub.Client
	pub       *pubsub.Publisher
	pending   []pending
	published beam.Counter
}

type pending struct {
	res *pubsub.PublishResult
	key string
}

func (f *publishFn) Setup(ctx context.Context) error {
	n, err := ParseTopic(f.Topic)
	if err != nil {
		return err
	}
	if f.client, err = pubsub.NewClient(context.WithoutCancel(ctx), n.Project); err != nil {
		return err
	}
	f.pub = f.client.Publisher(f.Topic)
	f.pub.EnableMessageOrdering = true
	f.published = beam.NewCounter("beamagents", "pubsub_published")
	return nil
}

func (f *publishFn) StartBundle(context.Context) { f.pending = f.pending[:0] }

func (f *publishFn) ProcessElement(ctx context.Context, b []byte) error {
	m, err := OutputMessage(f.Type, b)
	if err != nil {
		return err
	}
	res := f.pub.Publish(ctx, &pubsub.Message{Data: m.Data, Attributes: m.Attributes, OrderingKey: m.OrderingKey})
	f.pending = append(f.pending, pending{res: res, key: m.OrderingKey})
	return nil
}

// FinishBundle waits until Pub/Sub accepted the bundle's messages. On an error the ordering
// keys it paused are resumed (the retried bundle publishes them again) and the bundle fails.
func (f *publishFn) FinishBundle(ctx context.Context) error {
	var first error
	for _, p := range f.pending {
		if _, err := p.res.Get(ctx); err != nil {
			if first == nil {
				first = fmt.Errorf("pubsub: publishing to %s: %w", f.Topic, err)
			}
			if p.key != "" {
				f.pub.ResumePublish(p.key)
			}
		}
	}
	n := int64(len(f.pending))
	f.pending = f.pending[:0]
	if first != nil {
		return first
	}
	f.published.Inc(ctx, n)
	add(lookupRun(f.Run), func(r *Run) *atomic.Int64 { return &r.published }, n)
	return nil
}

func (f *publishFn) Teardown() {
	if f.pub != nil {
		f.pub.Stop()
	}
	if f.client != nil {
		f.client.Close()
	}
}
