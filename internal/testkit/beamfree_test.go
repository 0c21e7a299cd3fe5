package testkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/beamagents/beamagents/"

// beamShell lists the packages that may link Apache Beam: the Beam shell (transforms, pipeline,
// pubsub), the command line that launches it and the machinery its commands drive (a run's
// files, state directory, status and report; dev's loop), and the kits and harnesses that run
// Prism. The core (agent and agent/drive), the wire and state codecs, records, the console,
// the effector, the long-term memory store and the model clients are plain Go: they must run
// in a process that never starts a pipeline (an effector service, a console, a user's unit
// test).
var beamShell = map[string]bool{
	"transforms":                   true,
	"pipeline":                     true,
	"pubsub":                       true,
	"cli":                          true,
	"cmd/beamagents":               true,
	"internal/devloop":             true,
	"internal/outfiles":            true,
	"internal/runreport":           true,
	"internal/runstate":            true,
	"internal/runstatus":           true,
	"internal/streamrun":           true,
	"internal/testkit/conformance": true,
	"internal/testkit/prismsmoke":  true,
	"scripts/chaos":                true,
}

// Only the Beam shell links Apache Beam.
func TestOnlyTheShellLinksBeam(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var linking []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		rel := strings.TrimPrefix(pkg, module)
		if !strings.Contains(" "+deps, " github.com/apache/beam/") {
			continue
		}
		linking = append(linking, rel)
		if !beamShell[rel] {
			t.Errorf("%s links Apache Beam; only the Beam shell may (see beamShell)", rel)
		}
	}
	// The rule must see the shell, or it proves nothing.
	if len(linking) < len(beamShell) {
		t.Errorf("only %v link Apache Beam; every package of beamShell should", linking)
	}
}
