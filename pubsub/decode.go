package pubsub

import (
	"context"
	"encoding/binary"
	"errors"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/host"
	"github.com/beamagents/beamagents/records"
)

func init() {
	register.DoFn5x0[context.Context, []byte, func([]byte, []byte), func([]byte), func([]byte)](&decodeFn{})
	register.Emitter2[[]byte, []byte]()
	register.Emitter1[[]byte]()
}

// decodeFn turns pulled messages (serialized PubsubMessages) into keyed envelopes, each
// value framed with its dedup id (see frameID), and rejects what does not decode: the
// rejected message verbatim for the errors topic, and its ActivationErrorRecord for the
// dead-letter files. Nothing is dropped.
type decodeFn struct {
	EventTimeAttribute, EnvelopeIDs string

	decoded, invalid beam.Counter
}

func (f *decodeFn) Setup() {
	f.decoded = beam.NewCounter("beamagents", "envelopes_decoded")
	f.invalid = beam.NewCounter("beamagents", "envelopes_invalid")
}

func (f *decodeFn) ProcessElement(ctx context.Context, raw []byte, keyed func([]byte, []byte), rejectedOut, dead func([]byte)) {
	m := &pubsubpb.PubsubMessage{}
	if err := proto.Unmarshal(raw, m); err != nil {
		// Only this package's reader feeds this step; a broken element is still kept.
		m = &pubsubpb.PubsubMessage{Data: raw}
	}
	d, err := DecodeMessage(m, Options{EventTimeAttribute: f.EventTimeAttribute, EnvelopeIDAttribute: f.EnvelopeIDs})
	if err != nil {
		f.invalid.Inc(ctx, 1)
		reason := records.ReasonEnvelopeInvalid
		var ae *agent.Error
		if errors.As(err, &ae) {
			reason = ae.Reason
		}
		r, _ := proto.MarshalOptions{Deterministic: true}.Marshal(rejected(m, string(reason), err))
		rejectedOut(r)
		rec, _ := proto.MarshalOptions{Deterministic: true}.Marshal(host.DeadLetter(d.Envelope.GetEntityKey(), d.EventMs, err))
		dead(rec)
		return
	}
	f.decoded.Inc(ctx, 1)
	keyed(d.Envelope.GetEntityKey(), frameID(d.DedupID, d.Canonical))
}

// frameID prefixes an envelope with its dedup id: uvarint(len(id)) || id || envelope.
func frameID(id string, env []byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, len(id)+len(env)+2), uint64(len(id)))
	return append(append(b, id...), env...)
}

// unframeID splits what frameID joined.
func unframeID(b []byte) (id string, env []byte, ok bool) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)-w) {
		return "", nil, false
	}
	return string(b[w : w+int(n)]), b[w+int(n):], true
}
