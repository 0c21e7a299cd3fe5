package console_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The console builds without Apache Beam: it reads output files and topics through package
// records and pubsub/wire, never through the pipeline.
func TestNoBeamDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/beamagents/beamagents/console").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/apache/beam/") {
			t.Errorf("console links %s", p)
		}
	}
}
