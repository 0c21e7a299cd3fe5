package transforms_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

const shadowManifestPath = "testdata/update_manifest_shadow.json"

// shadowConfig is the default pinned configuration with a shadow agent beside production.
func shadowConfig() pipeline.Options {
	o := manifestConfigs()["default"]
	o.Shadow = pipeline.ShadowOptions{ShadowOptions: transforms.ShadowOptions{Agent: support.Name}}
	return o
}

// A shadow's names, state ids and timer families are pinned too, and they are additions
// only: a job launched without a shadow updates to one with it (every production line
// unchanged, only "+" lines) and back (only "-" lines, every one the shadow's). Each of its
// stateful steps has one timer family.
func TestShadowUpdateManifest(t *testing.T) {
	m, err := pipeline.BuildManifest(shadowConfig())
	if err != nil {
		t.Fatal(err)
	}
	if *updateManifest {
		if err := os.WriteFile(shadowManifestPath, m.MarshalIndent(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(shadowManifestPath)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := pipeline.ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := m.Diff(pinned, nil); len(diff) > 0 {
		t.Fatalf("the built pipeline with a shadow no longer matches %s (- running, + new):\n%s", shadowManifestPath, strings.Join(diff, "\n"))
	}
	plain := builtManifests(t)["default"]
	shadowLine := func(l string) bool {
		for _, p := range []string{transforms.ShadowScope, transforms.ShadowCompareScope, "Write_" + pipeline.ShadowIntentsName, "Write_" + pipeline.ShadowDivergencesName} {
			if strings.Contains(l, `"`+p+`"`) || strings.Contains(l, `"`+p+"/") || strings.Contains(l, `"`+p+".") {
				return true
			}
		}
		return false
	}
	for dir, diff := range map[string][]string{"+": m.Diff(plain, nil), "-": plain.Diff(m, nil)} {
		if len(diff) == 0 {
			t.Fatalf("adding a shadow changes nothing")
		}
		for _, l := range diff {
			if !strings.HasPrefix(l, dir+" ") || !shadowLine(l) {
				t.Errorf("%s: not an addition of the shadow's", l)
			}
		}
	}
	for b, c := range m.Boundaries {
		if strings.Contains(c, "beam:go:") {
			t.Errorf("boundary %s has a Go-specific coder: %s", b, c)
		}
	}
	for _, st := range m.Stateful {
		if len(st.TimerFamily) != 1 {
			t.Errorf("%s: timer families %v", st.Transform, st.TimerFamily)
		}
	}
	var names []string
	for _, st := range m.Stateful {
		names = append(names, st.Transform)
	}
	if js, _ := json.Marshal(names); len(m.Stateful) != 3 {
		t.Errorf("stateful steps %s, want production's, the shadow's and the comparison", js)
	}
}
