package transforms_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

var updateManifest = flag.Bool("update", false, "rewrite testdata/update_manifest.json (this breaks pipeline --update compatibility: say so in the change, and add the renames to testdata/transform_name_mapping.json)")

const (
	manifestPath = "testdata/update_manifest.json"
	mappingPath  = "testdata/transform_name_mapping.json"
)

// manifestConfigs are the pipeline configurations whose --update contract is pinned: the
// default (sorted single-file outputs), the production one (sharded outputs), each with
// the cost ledger, whose steps are an addition to the others', and an agent with a tenant
// budget (its admission stage before the keyed step).
func manifestConfigs() map[string]pipeline.Options {
	base := pipeline.Options{Options: transforms.Options{Agent: support.Name}, Input: "in/*.jsonl", OutputDir: "out", Restore: "snap/*.binpb"}
	sharded := base
	sharded.Shards = 4
	ledger, shardedLedger := base, sharded
	ledger.Ledger, shardedLedger.Ledger = true, true
	budgeted := base
	budgeted.Agent, budgeted.Config = budgetAgent, []byte("park")
	return map[string]pipeline.Options{"default": base, "sharded": sharded, "ledger": ledger, "sharded_ledger": shardedLedger, "budget": budgeted}
}

func builtManifests(t *testing.T) map[string]*pipeline.Manifest {
	t.Helper()
	out := map[string]*pipeline.Manifest{}
	for name, o := range manifestConfigs() {
		m, err := pipeline.BuildManifest(o)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = m
	}
	return out
}

func pinned(t *testing.T) (map[string]*pipeline.Manifest, map[string]string) {
	t.Helper()
	var ms map[string]*pipeline.Manifest
	b, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ms); err != nil {
		t.Fatalf("%s: %v", manifestPath, err)
	}
	mapping := map[string]string{}
	if b, err := os.ReadFile(mappingPath); err == nil {
		if err := json.Unmarshal(b, &mapping); err != nil {
			t.Fatalf("%s: %v", mappingPath, err)
		}
	}
	return ms, mapping
}

// checkManifests returns the readable differences between built and pinned manifests, pinned
// names renamed by mapping.
func checkManifests(built, pinned map[string]*pipeline.Manifest, mapping map[string]string) []string {
	var diff []string
	for name, m := range built {
		p, ok := pinned[name]
		if !ok {
			diff = append(diff, "configuration "+name+" is not pinned")
			continue
		}
		for _, l := range m.Diff(p, mapping) {
			diff = append(diff, name+": "+l)
		}
	}
	slices.Sort(diff)
	return diff
}

// Every transform name, stateful step (state ids and coders, timer family) and boundary
// coder of the built pipelines is the pipeline's --update contract, pinned in
// testdata/update_manifest.json. A change fails here unless every rename is listed in
// testdata/transform_name_mapping.json (old → new, passed to Dataflow as
// --transform_name_mapping); state ids, timer families and coders cannot be mapped.
func TestUpdateManifest(t *testing.T) {
	built := builtManifests(t)
	if *updateManifest {
		b, _ := json.MarshalIndent(built, "", "  ")
		if err := os.WriteFile(manifestPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, mapping := pinned(t)
	if diff := checkManifests(built, want, mapping); len(diff) > 0 {
		t.Fatalf("the built pipeline no longer matches %s; a running pipeline could not be updated to it "+
			"(- running, + new):\n%s", manifestPath, strings.Join(diff, "\n"))
	}
	if len(mapping) > 0 {
		t.Logf("the update needs --transform_name_mapping=%s", filepath.Base(mappingPath))
	}
}

// The check bites: renaming a state id, the timer family or a transform in the pipeline the
// SDK builds fails it, with the change named; a transform rename passes only with its mapping.
func TestUpdateManifestBites(t *testing.T) {
	want, mapping := pinned(t)
	step := "RunAgent/transforms.runAgentFn"
	for _, tc := range []struct {
		name    string
		mutate  func(*pipepb.PTransform, *pipepb.ParDoPayload)
		mapping map[string]string
		want    []string // lines the diff must hold; none: the check must pass
	}{
		{"state id", func(_ *pipepb.PTransform, pd *pipepb.ParDoPayload) {
			pd.StateSpecs["agent_state.v2"] = pd.StateSpecs[transforms.StateCellID]
			delete(pd.StateSpecs, transforms.StateCellID)
		}, nil, []string{`- stateful "` + step + `" state "agent_state.v1"`, `+ stateful "` + step + `" state "agent_state.v2"`}},
		{"timer family", func(_ *pipepb.PTransform, pd *pipepb.ParDoPayload) {
			pd.TimerFamilySpecs["agent.v2"] = pd.TimerFamilySpecs[transforms.TimerFamilyID]
			delete(pd.TimerFamilySpecs, transforms.TimerFamilyID)
		}, nil, []string{`- stateful "` + step + `" timer family "agent.v1"`, `+ stateful "` + step + `" timer family "agent.v2"`}},
		{"transform", func(tr *pipepb.PTransform, _ *pipepb.ParDoPayload) {
			tr.UniqueName = "RunAgent/transforms.agentFn"
		}, nil, []string{`- transform "` + step + `"`, `+ transform "RunAgent/transforms.agentFn"`, `+ stateful "RunAgent/transforms.agentFn" state`}},
		{"transform with its mapping", func(tr *pipepb.PTransform, _ *pipepb.ParDoPayload) {
			tr.UniqueName = "RunAgent/transforms.agentFn"
		}, map[string]string{step: "RunAgent/transforms.agentFn"}, nil},
		{"state id with a mapping", func(tr *pipepb.PTransform, pd *pipepb.ParDoPayload) {
			tr.UniqueName = "RunAgent/transforms.agentFn"
			pd.StateSpecs["agent_state.v2"] = pd.StateSpecs[transforms.StateCellID]
			delete(pd.StateSpecs, transforms.StateCellID)
		}, map[string]string{step: "RunAgent/transforms.agentFn"}, []string{`+ stateful "RunAgent/transforms.agentFn" state "agent_state.v2"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built := map[string]*pipeline.Manifest{}
			for name, o := range manifestConfigs() {
				p, s := beam.NewPipelineWithRoot()
				if err := pipeline.Build(s, o); err != nil {
					t.Fatal(err)
				}
				pp, err := pipeline.PipelineProto(p)
				if err != nil {
					t.Fatal(err)
				}
				mutateStep(t, pp, step, tc.mutate)
				if built[name], err = pipeline.ManifestOf(pp); err != nil {
					t.Fatal(err)
				}
			}
			m := mapping
			if tc.mapping != nil {
				m = tc.mapping
			}
			diff := strings.Join(checkManifests(built, want, m), "\n")
			if len(tc.want) == 0 && diff != "" {
				t.Fatalf("the check fails a mapped rename:\n%s", diff)
			}
			for _, w := range tc.want {
				if !strings.Contains(diff, w) {
					t.Errorf("the diff lacks %q:\n%s", w, diff)
				}
			}
		})
	}
}

// mutateStep applies mutate to the transform named name and its ParDo payload in pp.
func mutateStep(t *testing.T, pp *pipepb.Pipeline, name string, mutate func(*pipepb.PTransform, *pipepb.ParDoPayload)) {
	t.Helper()
	for _, tr := range pp.GetComponents().GetTransforms() {
		if tr.GetUniqueName() != name {
			continue
		}
		pd := &pipepb.ParDoPayload{}
		if err := proto.Unmarshal(tr.GetSpec().GetPayload(), pd); err != nil {
			t.Fatal(err)
		}
		mutate(tr, pd)
		b, err := proto.Marshal(pd)
		if err != nil {
			t.Fatal(err)
		}
		tr.Spec.Payload = b
		return
	}
	t.Fatalf("no transform %q", name)
}

// Exactly one stateful step (two with a tenant budget's admission), each with exactly one
// timer family: a DoFn with two timer families hangs on Prism, and Flink's Go support has no
// processing-time timers.
func TestOneTimerFamily(t *testing.T) {
	type stepWant struct{ family, cell, buffer string }
	agentStep := stepWant{transforms.TimerFamilyID, transforms.StateCellID, transforms.OrderBufferID}
	admitStep := stepWant{transforms.AdmitTimerID, transforms.TallyCellID, transforms.AdmitBufferID}
	for name, m := range builtManifests(t) {
		want := []stepWant{agentStep}
		if name == "budget" {
			want = []stepWant{admitStep, agentStep}
		}
		steps := slices.Clone(m.Stateful)
		slices.SortFunc(steps, func(x, y pipeline.StatefulStep) int { return strings.Compare(x.Transform, y.Transform) })
		if len(steps) != len(want) {
			t.Fatalf("%s: %d stateful steps, want %d: %+v", name, len(steps), len(want), steps)
		}
		for i, w := range want {
			if fams := steps[i].TimerFamily; len(fams) != 1 || fams[0] != w.family {
				t.Fatalf("%s: %s: timer families %v, want exactly [%s]", name, steps[i].Transform, fams, w.family)
			}
			if len(steps[i].State) != 2 || steps[i].State[w.cell] == "" || steps[i].State[w.buffer] == "" {
				t.Fatalf("%s: %s: state ids %v", name, steps[i].Transform, steps[i].State)
			}
		}
	}
}

// No Go-specific coder crosses a stateful or grouping boundary: such a coder's spec embeds Go
// type information, so a refactoring could change it and break an update.
func TestBoundaryCodersAreStandard(t *testing.T) {
	for name, m := range builtManifests(t) {
		for b, c := range m.Boundaries {
			if strings.Contains(c, "beam:go:") {
				t.Errorf("%s: boundary %s has a Go-specific coder: %s", name, b, c)
			}
		}
		for _, st := range m.Stateful {
			for id, c := range st.State {
				if strings.Contains(c, "beam:go:") {
					t.Errorf("%s: state %s has a Go-specific coder: %s", name, id, c)
				}
			}
		}
	}
}

// The cost ledger adds steps and changes none: the pipeline with it holds every transform,
// stateful step and boundary of the one without it, unchanged, so a running pipeline can be
// updated to write a ledger.
func TestLedgerIsAnAddition(t *testing.T) {
	built := builtManifests(t)
	for without, with := range map[string]string{"default": "ledger", "sharded": "sharded_ledger"} {
		diff := built[with].Diff(built[without], nil)
		if len(diff) == 0 {
			t.Errorf("%s: the ledger added no step", with)
		}
		for _, l := range diff {
			if !strings.HasPrefix(l, "+ ") || !strings.Contains(l, `"Ledger`) {
				t.Errorf("%s against %s: %s", with, without, l)
			}
		}
	}
}
