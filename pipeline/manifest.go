package pipeline

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/internal/jsontext"
)

// A Manifest is what an in-place update (Dataflow's --update) needs to find unchanged in a
// new version of a running pipeline, read from the pipeline proto the SDK submits: every
// transform's unique name, every stateful step's state ids, coders and timer families, and
// the coder and windowing of every PCollection that crosses a stateful or grouping boundary.
type Manifest struct {
	// Transforms maps every transform's unique name to its URN ("" for a composite).
	Transforms map[string]string `json:"transforms"`
	// Stateful lists the stateful steps, by transform name.
	Stateful []StatefulStep `json:"stateful"`
	// Boundaries maps each PCollection that enters a stateful step or a grouping, or leaves a
	// grouping, named "PRODUCER.OUTPUT", to its coder chain and window function.
	Boundaries map[string]string `json:"boundaries"`
}

// A StatefulStep is one stateful ParDo of a Manifest.
type StatefulStep struct {
	Transform    string            `json:"transform"`
	State        map[string]string `json:"state"`          // state id -> kind and coder chain
	TimerFamily  []string          `json:"timer_families"` // timer family ids
	InputCoder   string            `json:"input_coder"`
	OutputCoders []string          `json:"output_coders"`
}

// BuildManifest builds the pipeline of o (without running it) and returns its Manifest.
func BuildManifest(o Options) (*Manifest, error) {
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, o); err != nil {
		return nil, err
	}
	pp, err := PipelineProto(p)
	if err != nil {
		return nil, err
	}
	return ManifestOf(pp)
}

// PipelineProto returns the pipeline proto the SDK submits for p (with a loopback
// environment: the environment is not part of the update contract).
func PipelineProto(p *beam.Pipeline) (*pipepb.Pipeline, error) {
	edges, _, err := p.Build()
	if err != nil {
		return nil, err
	}
	return graphx.Marshal(edges, &graphx.Options{Environment: &pipepb.Environment{Urn: "beam:env:loopback:v1"}})
}

// ManifestOf reads the Manifest of a pipeline proto.
func ManifestOf(pp *pipepb.Pipeline) (*Manifest, error) {
	m := &Manifest{Transforms: map[string]string{}, Boundaries: map[string]string{}}
	comps := pp.GetComponents()
	producer := map[string]string{} // PCollection id -> "PRODUCER.OUTPUT"
	for _, tr := range comps.GetTransforms() {
		for local, pc := range tr.GetOutputs() {
			if len(tr.GetSubtransforms()) == 0 {
				producer[pc] = tr.GetUniqueName() + "." + local
			}
		}
	}
	boundary := func(pc string) {
		if name, ok := producer[pc]; ok {
			col := comps.GetPcollections()[pc]
			ws := comps.GetWindowingStrategies()[col.GetWindowingStrategyId()]
			m.Boundaries[name] = coderChain(comps, col.GetCoderId()) + " in " + ws.GetWindowFn().GetUrn()
		}
	}
	for _, tr := range comps.GetTransforms() {
		m.Transforms[tr.GetUniqueName()] = tr.GetSpec().GetUrn()
		switch tr.GetSpec().GetUrn() {
		case graphx.URNGBK, graphx.URNCombinePerKey, graphx.URNReshuffle:
			for _, pc := range tr.GetInputs() {
				boundary(pc)
			}
			for _, pc := range tr.GetOutputs() {
				boundary(pc)
			}
		case graphx.URNParDo:
			st, err := statefulStep(comps, tr)
			if err != nil {
				return nil, err
			}
			if st != nil {
				m.Stateful = append(m.Stateful, *st)
				for _, pc := range tr.GetInputs() {
					boundary(pc)
				}
			}
		}
	}
	slices.SortFunc(m.Stateful, func(a, b StatefulStep) int { return strings.Compare(a.Transform, b.Transform) })
	return m, nil
}

func statefulStep(comps *pipepb.Components, tr *pipepb.PTransform) (*StatefulStep, error) {
	pd := &pipepb.ParDoPayload{}
	if err := proto.Unmarshal(tr.GetSpec().GetPayload(), pd); err != nil {
		return nil, fmt.Errorf("transform %s: %w", tr.GetUniqueName(), err)
	}
	if len(pd.GetStateSpecs())+len(pd.GetTimerFamilySpecs()) == 0 {
		return nil, nil
	}
	st := &StatefulStep{Transform: tr.GetUniqueName(), State: map[string]string{}}
	for id, spec := range pd.GetStateSpecs() {
		coder, kind := spec.GetReadModifyWriteSpec().GetCoderId(), "value"
		if coder == "" {
			coder, kind = spec.GetBagSpec().GetElementCoderId(), "bag"
		}
		st.State[id] = kind + " " + coderChain(comps, coder)
	}
	st.TimerFamily = slices.Sorted(maps.Keys(pd.GetTimerFamilySpecs()))
	for _, in := range tr.GetInputs() {
		if _, side := pd.GetSideInputs()[in]; !side {
			st.InputCoder = coderChain(comps, comps.GetPcollections()[in].GetCoderId())
		}
	}
	for _, out := range tr.GetOutputs() {
		st.OutputCoders = append(st.OutputCoders, coderChain(comps, comps.GetPcollections()[out].GetCoderId()))
	}
	slices.Sort(st.OutputCoders)
	return st, nil
}

func coderChain(comps *pipepb.Components, id string) string {
	c := comps.GetCoders()[id]
	s := c.GetSpec().GetUrn()
	for _, sub := range c.GetComponentCoderIds() {
		s += "(" + coderChain(comps, sub) + ")"
	}
	return s
}

// MarshalIndent renders the manifest as the stable, indented JSON that is committed.
func (m *Manifest) MarshalIndent() []byte {
	b, _ := json.MarshalIndent(m, "", "  ") // maps marshal with sorted keys
	return append(b, '\n')
}

// ParseManifest reads a manifest written by MarshalIndent.
func ParseManifest(b []byte) (*Manifest, error) {
	m := &Manifest{}
	if err := jsontext.Decode(string(b), m, jsontext.DecodeOptions{}); err != nil {
		return nil, fmt.Errorf("update manifest: %w", err)
	}
	return m, nil
}

// Renamed returns the manifest with transform names (and the names derived from them: state
// owners, boundary producers) rewritten by mapping (old name → new name, the form of
// Dataflow's --transform_name_mapping). A name is rewritten when it is a mapped name or lies
// under one (a mapped composite renames its subtransforms).
func (m *Manifest) Renamed(mapping map[string]string) *Manifest {
	rename := func(name string) string {
		for old, nu := range mapping {
			if name == old {
				return nu
			}
			if strings.HasPrefix(name, old+"/") {
				return nu + name[len(old):]
			}
		}
		return name
	}
	out := &Manifest{Transforms: map[string]string{}, Boundaries: map[string]string{}}
	for n, urn := range m.Transforms {
		out.Transforms[rename(n)] = urn
	}
	for n, c := range m.Boundaries {
		tr, local, _ := strings.Cut(n, ".")
		out.Boundaries[rename(tr)+"."+local] = c
	}
	for _, st := range m.Stateful {
		st.Transform = rename(st.Transform)
		out.Stateful = append(out.Stateful, st)
	}
	slices.SortFunc(out.Stateful, func(a, b StatefulStep) int { return strings.Compare(a.Transform, b.Transform) })
	return out
}

// Diff lists, one line each, how m (a new version) differs from pinned (the running one),
// after renaming pinned's transforms by mapping: "- " lines are in the running pipeline only,
// "+ " lines in the new one only. No lines means an update keeps every name, state cell,
// timer family and boundary coder.
func (m *Manifest) Diff(pinned *Manifest, mapping map[string]string) []string {
	old, nu := pinned.Renamed(mapping).lines(), m.lines()
	var diff []string
	for _, l := range old {
		if !slices.Contains(nu, l) {
			diff = append(diff, "- "+l)
		}
	}
	for _, l := range nu {
		if !slices.Contains(old, l) {
			diff = append(diff, "+ "+l)
		}
	}
	return diff
}

// lines flattens the manifest into sorted, self-describing lines.
func (m *Manifest) lines() []string {
	var l []string
	for n, urn := range m.Transforms {
		l = append(l, fmt.Sprintf("transform %q %s", n, urn))
	}
	for n, c := range m.Boundaries {
		l = append(l, fmt.Sprintf("boundary %q coder %s", n, c))
	}
	for _, st := range m.Stateful {
		for id, spec := range st.State {
			l = append(l, fmt.Sprintf("stateful %q state %q %s", st.Transform, id, spec))
		}
		for _, fam := range st.TimerFamily {
			l = append(l, fmt.Sprintf("stateful %q timer family %q", st.Transform, fam))
		}
		l = append(l, fmt.Sprintf("stateful %q input %s", st.Transform, st.InputCoder))
		for _, c := range st.OutputCoders {
			l = append(l, fmt.Sprintf("stateful %q output %s", st.Transform, c))
		}
	}
	slices.Sort(l)
	return l
}
