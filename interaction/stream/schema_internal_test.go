package stream

import (
	"testing"

	"github.com/beamagents/beamagents/interaction"
	"github.com/beamagents/beamagents/internal/testkit/prototest"
)

// compileTestSchema compiles an empty record whose type id is root.
func compileTestSchema(t *testing.T, root string) *interaction.Schema {
	t.Helper()
	files := prototest.CompileSources(t, map[string]string{"e.proto": `syntax = "proto3";
package e.v1;
import "beam_agents/v1/interaction_options.proto";
message E { option (beam_agents.v1.type_id) = "` + root + `"; }
`})
	s, err := interaction.Compile(prototest.Message(t, files, "e.v1.E"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
