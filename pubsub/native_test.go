package pubsub_test

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// urns builds the pipeline of o and counts its transforms by URN, with the ParDo
// payloads' DoFn names.
func urns(t *testing.T, o pipeline.Options) (map[string]int, map[string]bool) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if err := pipeline.Build(s, o); err != nil {
		t.Fatal(err)
	}
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	pp, err := graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:loopback:v1"}})
	if err != nil {
		t.Fatal(err)
	}
	count, names := map[string]int{}, map[string]bool{}
	for _, tr := range pp.GetComponents().GetTransforms() {
		count[tr.GetSpec().GetUrn()]++
		names[tr.GetUniqueName()] = true
	}
	return count, names
}

// With Native (set by pipeline.Run when the runner is dataflow) the same options build
// Beam's pubsubio read and write transforms, which the Dataflow service implements; without
// it, the splittable reader and the publishing DoFns, which any runner runs. (Dataflow itself
// cannot run here; this checks the graph that would be submitted.)
func TestDataflowUsesNativePubSub(t *testing.T) {
	o := pipeline.Options{Options: transforms.Options{Agent: support.Name}, InputSubscription: "projects/p/subscriptions/s",
		IntentsTopic: "projects/p/topics/i", ErrorsTopic: "projects/p/topics/e"}
	const readURN, writeURN = "beam:transform:pubsub_read:v1", "beam:transform:pubsub_write:v1"

	portable, names := urns(t, o)
	if portable[readURN] != 0 || portable[writeURN] != 0 {
		t.Errorf("portable graph uses pubsubio: %v", portable)
	}
	if !names["PubSubRead/Pull/pubsub.pullFn"] || !names["PubSubRead/Dedup/pubsub.dedupFn"] {
		t.Errorf("portable graph lacks the reader or the dedup step: %v", names)
	}

	o.PubSub.Native = true
	native, names := urns(t, o)
	if native[readURN] != 1 || native[writeURN] != 3 { // intents, errors records, rejected inputs
		t.Errorf("native graph: %d pubsub reads, %d writes; want 1 and 3", native[readURN], native[writeURN])
	}
	if names["PubSubRead/Pull/pubsub.pullFn"] || !names["PubSubRead/Dedup/pubsub.dedupFn"] {
		t.Errorf("native graph: reader/dedup steps wrong: %v", names)
	}
}
