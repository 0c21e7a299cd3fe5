package prismsmoke

import (
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
)

func TestMain(m *testing.M) { ptest.Main(m) }

func TestStatefulDoFnOnPrism(t *testing.T) {
	envs := []*pb.AgentEnvelope{}
	for _, k := range []string{"a", "b", "c"} {
		for i := 0; i < 3; i++ {
			envs = append(envs, &pb.AgentEnvelope{
				EntityKey: []byte(k),
				Payload:   &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("x")},
			})
		}
	}
	p, s := beam.NewPipelineWithRoot()
	out := Pipeline(s, envs)
	passert.Equals(s, out,
		"a#1:x", "a#2:x", "a#3:x", "b#1:x", "b#2:x", "b#3:x", "c#1:x", "c#2:x", "c#3:x",
		"a final final=3", "b final final=3", "c final final=3")
	ptest.RunAndValidate(t, p)
}
