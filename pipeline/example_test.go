package pipeline_test

import (
	"fmt"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// The --update manifest of the support pipeline: its one stateful step, with its state cells
// and timer family, read from the pipeline proto the SDK would submit.
func ExampleBuildManifest() {
	m, err := pipeline.BuildManifest(pipeline.Options{Options: transforms.Options{Agent: support.Name}, Input: "in/*.jsonl", OutputDir: "out", Shards: 8})
	if err != nil {
		panic(err)
	}
	for _, st := range m.Stateful {
		fmt.Println(st.Transform, st.State["agent_state.v1"], st.TimerFamily)
	}
	fmt.Println(m.Transforms["WriteShards_intents/pipeline.writeShardFn"])
	// Output:
	// RunAgent/transforms.runAgentFn value beam:coder:bytes:v1 [agent.v1]
	// beam:transform:pardo:v1
}
