package transforms_test

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
	"github.com/beamagents/beamagents/transforms"
)

var updateManifest = flag.Bool("update", false, "rewrite testdata/update_manifest.json (this breaks pipeline --update compatibility: say so in the change)")

// statefulStep is what pipeline --update needs to find unchanged in a new version.
type statefulStep struct {
	Transform    string            `json:"transform"`
	State        map[string]string `json:"state"`          // state id -> coder URN chain
	TimerFamily  []string          `json:"timer_families"` // timer family ids
	InputCoder   string            `json:"input_coder"`
	OutputCoders []string          `json:"output_coders"`
}

func coderChain(p *pipepb.Pipeline, id string) string {
	c := p.GetComponents().GetCoders()[id]
	s := c.GetSpec().GetUrn()
	for _, sub := range c.GetComponentCoderIds() {
		s += "(" + coderChain(p, sub) + ")"
	}
	return s
}

func manifest(t *testing.T) []statefulStep {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if err := pipeline.Build(s, pipeline.Options{Agent: support.Name, Input: "in/*.jsonl", OutputDir: "out", Restore: "snap/*.binpb"}); err != nil {
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
	var steps []statefulStep
	for _, tr := range pp.GetComponents().GetTransforms() {
		if tr.GetSpec().GetUrn() != graphx.URNParDo {
			continue
		}
		pd := &pipepb.ParDoPayload{}
		if err := proto.Unmarshal(tr.GetSpec().GetPayload(), pd); err != nil {
			t.Fatal(err)
		}
		if len(pd.GetStateSpecs())+len(pd.GetTimerFamilySpecs()) == 0 {
			continue
		}
		st := statefulStep{Transform: tr.GetUniqueName(), State: map[string]string{}}
		for id, spec := range pd.GetStateSpecs() {
			coder := spec.GetReadModifyWriteSpec().GetCoderId()
			kind := "value"
			if coder == "" {
				coder, kind = spec.GetBagSpec().GetElementCoderId(), "bag"
			}
			st.State[id] = kind + " " + coderChain(pp, coder)
		}
		for id := range pd.GetTimerFamilySpecs() {
			st.TimerFamily = append(st.TimerFamily, id)
		}
		slices.Sort(st.TimerFamily)
		for _, in := range tr.GetInputs() {
			st.InputCoder = coderChain(pp, pp.GetComponents().GetPcollections()[in].GetCoderId())
		}
		for _, out := range tr.GetOutputs() {
			st.OutputCoders = append(st.OutputCoders, coderChain(pp, pp.GetComponents().GetPcollections()[out].GetCoderId()))
		}
		slices.Sort(st.OutputCoders)
		steps = append(steps, st)
	}
	slices.SortFunc(steps, func(a, b statefulStep) int {
		if a.Transform < b.Transform {
			return -1
		}
		return 1
	})
	return steps
}

// The stateful step's transform name, state ids and coders, and timer family are the
// pipeline's --update contract: pinned in testdata/update_manifest.json.
func TestUpdateManifest(t *testing.T) {
	got, err := json.MarshalIndent(manifest(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
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
		t.Fatalf("the built pipeline no longer matches the --update manifest; a running pipeline could not be updated to it.\n got: %s\nwant: %s", got, want)
	}
}

// Exactly one stateful step, with exactly one timer family: a DoFn with two timer families
// hangs on Prism, and Flink's Go support has no processing-time timers.
func TestOneTimerFamily(t *testing.T) {
	steps := manifest(t)
	if len(steps) != 1 {
		t.Fatalf("%d stateful steps, want 1: %+v", len(steps), steps)
	}
	if fams := steps[0].TimerFamily; len(fams) != 1 || fams[0] != transforms.TimerFamilyID {
		t.Fatalf("timer families %v, want exactly [%s]", fams, transforms.TimerFamilyID)
	}
	if len(steps[0].State) != 2 || steps[0].State[transforms.StateCellID] == "" || steps[0].State[transforms.OrderBufferID] == "" {
		t.Fatalf("state ids %v", steps[0].State)
	}
}
