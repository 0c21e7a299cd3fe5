package pipeline

import (
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/records"
)

// topics is each output's topic ("" for none).
func (o Options) topics() records.Set[string] {
	return records.Set[string]{o.IntentsTopic, o.TracesTopic, o.FinalsTopic, o.SnapshotsTopic, o.ErrorsTopic}
}

// readPubSub adds the Pub/Sub source when a subscription is set; otherwise every
// PCollection of the returned Source is invalid (flattenSome skips them).
func (o Options) readPubSub(s beam.Scope) (pubsub.Source, error) {
	if o.InputSubscription == "" {
		return pubsub.Source{}, nil
	}
	return pubsub.Read(s, o.InputSubscription, o.PubSub)
}

// publish adds a Pub/Sub sink per topic set. The errors topic gets the dead-letter records
// (dead) and the rejected Pub/Sub inputs verbatim; the records of those rejected inputs go
// to the files only. With a Run it also tallies the outputs for a live status.
func (o Options) publish(s beam.Scope, cols records.Set[beam.PCollection], dead beam.PCollection, src pubsub.Source) error {
	topics := o.topics()
	for _, out := range records.Kinds() {
		topic := topics.Of(out.Out)
		if topic == "" {
			continue
		}
		col := cols.Of(out.Out)
		if out.Out == records.OutDeadLetter && src.Rejected.IsValid() {
			col = dead
			if err := pubsub.PublishRejected(s, topic, src.Rejected, o.PubSub); err != nil {
				return err
			}
		}
		if err := pubsub.Publish(s, topic, out.Type, col, o.PubSub); err != nil {
			return err
		}
	}
	if o.PubSub.Run != "" {
		pubsub.Tally(s, o.PubSub.Run, cols.Of(records.OutIntent), cols.Of(records.OutTrace), cols.Of(records.OutDeadLetter))
	}
	return nil
}

// flattenSome flattens the valid PCollections among cols (one is returned as is).
func flattenSome(s beam.Scope, cols ...beam.PCollection) beam.PCollection {
	var valid []beam.PCollection
	for _, c := range cols {
		if c.IsValid() {
			valid = append(valid, c)
		}
	}
	if len(valid) == 1 {
		return valid[0]
	}
	return beam.Flatten(s, valid...)
}
