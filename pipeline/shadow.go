package pipeline

import (
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/transforms"
)

// The shadow's outputs: the files under OutputDir are these names with .binpb and .jsonl.
const (
	ShadowIntentsName     = "shadow_intents"     // the shadow's intents (ToolIntent), marked
	ShadowDivergencesName = "shadow_divergences" // one ShadowComparison per firing compared
)

// ShadowOptions run a candidate agent beside production on the same stream (`run
// --shadow_agent`), its effects quarantined.
type ShadowOptions struct {
	// Shadow names the candidate (Agent empty: no shadow) and its model limits.
	transforms.ShadowOptions
	// GraceMs is how long past a firing's event time the comparison waits for both sides'
	// outputs (0: transforms.DefaultShadowGraceMs).
	GraceMs int64
	// IntentsTopic and DivergencesTopic, when set, publish the shadow's intents and the
	// comparisons as well as writing them under OutputDir.
	IntentsTopic, DivergencesTopic string
}

// buildShadow adds the shadow beside production (out is production's outputs over keyed):
// the candidate's own stateful step in the scope Shadow (run is production's: RunAgent or
// RunAgentBatch), the comparison of both sides' outputs, and their sinks. Nothing of the
// shadow reaches production's outputs.
func (o Options) buildShadow(s beam.Scope, run func(beam.Scope, transforms.Options, beam.PCollection) (transforms.Outputs, error), keyed beam.PCollection, out transforms.Outputs) error {
	if o.Shadow.Agent == "" {
		return nil
	}
	sout, err := run(s.Scope(transforms.ShadowScope), o.Shadow.Shadowed(o.Options), keyed)
	if err != nil {
		return fmt.Errorf("shadow: %w", err)
	}
	cmp := transforms.CompareShadow(s, out, sout, o.Shadow.GraceMs)
	for _, k := range []struct {
		name, topic string
		typ         protoreflect.FullName
		col         beam.PCollection
	}{
		{ShadowIntentsName, o.Shadow.IntentsTopic, (&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName(), sout.Intents},
		{ShadowDivergencesName, o.Shadow.DivergencesTopic, (&pb.ShadowComparison{}).ProtoReflect().Descriptor().FullName(), cmp},
	} {
		switch {
		case o.OutputDir == "":
		case o.Shards > 0:
			WriteShards(s, o.OutputDir, k.name, k.typ, k.col, o.Shards, o.Window)
		default:
			WriteRecords(s, o.OutputDir, k.name, k.typ, k.col)
		}
		if k.topic != "" {
			if err := pubsub.Publish(s, k.topic, k.typ, k.col, o.PubSub); err != nil {
				return err
			}
		}
	}
	return nil
}

// shadowSteps are the step names a runner gives the metrics of the shadow's steps: the
// transforms under the scope Shadow, by edge id ("eN", as the portable runners name them)
// and by unique name.
type shadowSteps map[string]bool

func shadowStepsOf(p *beam.Pipeline) shadowSteps {
	steps := shadowSteps{}
	edges, _, err := p.Build()
	if err != nil {
		return steps
	}
	for _, e := range edges {
		for sc := e.Scope(); sc != nil; sc = sc.Parent {
			if sc.Label == transforms.ShadowScope {
				steps[fmt.Sprintf("e%d", e.ID())] = true
				break
			}
		}
	}
	return steps
}

// metricName is the name Result gives the metric name of step: a shadow's metrics are
// counted apart from production's, as shadow.NAME.
func (ss shadowSteps) metricName(step, name string) string {
	if ss[step] || strings.HasPrefix(step, transforms.ShadowScope+"/") {
		return "shadow." + name
	}
	return name
}
