package effector_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The effector and its subpackages build without Apache Beam: an effector binary does not
// link the pipeline's runner.
func TestNoBeamDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/beamagents/beamagents/effector/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/apache/beam/") {
			t.Errorf("effector links %s", p)
		}
	}
}
