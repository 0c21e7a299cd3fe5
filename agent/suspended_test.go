package agent_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent/host"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/statecodec"
)

// writeSuspended freezes testdata/suspended: the state of every bindings-agent suspension of
// the scenarios and what resuming it emitted, as written by the step loop that bindings agents
// ran before they became a handler. The files are frozen like golden/v1: never rewrite them.
var writeSuspended = flag.Bool("write-suspended", false, "write testdata/suspended/* (frozen: only for new scenarios)")

// suspension is the committed state of a key suspended by a bindings agent after input After
// of its scenario: the cells' bytes.
type suspension struct {
	After int               `json:"after"`
	Cells map[string][]byte `json:"cells"`
}

// TestSuspensionsOfTheStepLoopResume: a bindings suspension written by the earlier step loop
// (its continuation holds adapter beamagents.agent.v1 and an AgentResume) resumes to the same
// outputs and state, byte for byte: the stored state keeps its meaning.
func TestSuspensionsOfTheStepLoopResume(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "scenarios", "*.json"))
	n := 0
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		sc := loadScenario(t, path)
		if sc.Handler != "" {
			continue
		}
		statePath := filepath.Join("testdata", "suspended", name+".json")
		if *writeSuspended {
			writeSuspensions(t, sc, statePath)
		}
		raw, err := os.ReadFile(statePath)
		if os.IsNotExist(err) {
			continue // the scenario never suspends
		} else if err != nil {
			t.Fatal(err)
		}
		var list []suspension
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			n++
			t.Run(fmt.Sprintf("%s/after_%d", name, s.After), func(t *testing.T) {
				st := host.MapStore{}
				for c, b := range s.Cells {
					st[statecodec.Cell(c)] = b
				}
				got, _ := runScenarioFrom(t, sc, st, s.After+1, nil)
				golden := filepath.Join("testdata", "suspended", fmt.Sprintf("%s.after_%d.golden", name, s.After))
				if *writeSuspended {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("resuming differs from the step loop's outputs in %s:\n%s", golden, firstDiff(got, want))
				}
			})
		}
	}
	if n < 10 {
		t.Fatalf("only %d frozen suspensions", n)
	}
}

// writeSuspensions records the state after each input of sc that leaves the key suspended by
// a bindings agent.
func writeSuspensions(t *testing.T, sc *scenario, path string) {
	var list []suspension
	runScenarioFrom(t, sc, sc.store(t), 0, func(i int, st host.MapStore) {
		cont := &pb.Continuation{}
		if b, ok := st[statecodec.CellContinuation]; !ok || proto.Unmarshal(b, cont) != nil || cont.GetAdapter() != "beamagents.agent.v1" {
			return
		}
		s := suspension{After: i, Cells: map[string][]byte{}}
		for _, c := range slices.Sorted(maps.Keys(st)) {
			s.Cells[string(c)] = bytes.Clone(st[c])
		}
		list = append(list, s)
	})
	if len(list) == 0 {
		return
	}
	b, err := json.MarshalIndent(list, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d\n got: %.2000s\nwant: %.2000s", i+1, gl, wl)
		}
	}
	return ""
}
