package pubsub_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/transforms"
)

var updateManifest = flag.Bool("update", false, "rewrite testdata/update_manifest.json (this breaks pipeline --update compatibility: say so in the change)")

type step struct {
	Transform    string            `json:"transform"`
	State        map[string]string `json:"state,omitempty"`
	TimerFamily  []string          `json:"timer_families,omitempty"`
	InputCoder   string            `json:"input_coder"`
	OutputCoders []string          `json:"output_coders"`
}

func chain(p *pipepb.Pipeline, id string) string {
	c := p.GetComponents().GetCoders()[id]
	s := c.GetSpec().GetUrn()
	for _, sub := range c.GetComponentCoderIds() {
		s += "(" + chain(p, sub) + ")"
	}
	return s
}

// The Pub/Sub steps of a streaming pipeline's --update contract: the reader (its restriction
// travels in checkpoints), the decoder, and the stateful dedup step with its state id, coder
// and timer family. Pinned in testdata/update_manifest.json.
func TestUpdateManifest(t *testing.T) {
	p, s := beam.NewPipelineWithRoot()
	if err := pipeline.Build(s, pipeline.Options{Options: transforms.Options{Agent: support.Name}, InputSubscription: "projects/p/subscriptions/s", IntentsTopic: "projects/p/topics/i"}); err != nil {
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
	var steps []step
	for _, tr := range pp.GetComponents().GetTransforms() {
		if len(tr.GetSubtransforms()) > 0 || len(tr.GetInputs()) == 0 || !slices.Contains([]string{"PubSubRead"}, firstScope(tr.GetUniqueName())) {
			continue
		}
		st := step{Transform: tr.GetUniqueName()}
		pd := &pipepb.ParDoPayload{}
		if proto.Unmarshal(tr.GetSpec().GetPayload(), pd) == nil {
			for id, spec := range pd.GetStateSpecs() {
				if st.State == nil {
					st.State = map[string]string{}
				}
				st.State[id] = "value " + chain(pp, spec.GetReadModifyWriteSpec().GetCoderId())
			}
			for id := range pd.GetTimerFamilySpecs() {
				st.TimerFamily = append(st.TimerFamily, id)
			}
		}
		for _, in := range tr.GetInputs() {
			st.InputCoder = chain(pp, pp.GetComponents().GetPcollections()[in].GetCoderId())
		}
		for _, out := range tr.GetOutputs() {
			st.OutputCoders = append(st.OutputCoders, chain(pp, pp.GetComponents().GetPcollections()[out].GetCoderId()))
		}
		slices.Sort(st.OutputCoders)
		steps = append(steps, st)
	}
	slices.SortFunc(steps, func(a, b step) int {
		if a.Transform < b.Transform {
			return -1
		}
		return 1
	})
	var dedup *step
	for i := range steps {
		if steps[i].State[pubsub.DedupStateID] != "" {
			dedup = &steps[i]
		}
	}
	if dedup == nil || len(dedup.TimerFamily) != 1 || dedup.TimerFamily[0] != pubsub.DedupTimerID {
		t.Fatalf("no dedup step with state %s and one timer family %s: %+v", pubsub.DedupStateID, pubsub.DedupTimerID, steps)
	}
	got, _ := json.MarshalIndent(steps, "", "  ")
	got = append(got, '\n')
	path := filepath.Join("testdata", "update_manifest.json")
	if *updateManifest {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the Pub/Sub steps no longer match the --update manifest.\n got: %s\nwant: %s", got, want)
	}
}

func firstScope(name string) string {
	for i := range name {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return name
}
