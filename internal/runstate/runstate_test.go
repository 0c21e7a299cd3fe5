package runstate_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/runstate"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/statedir"
	"github.com/beamagents/beamagents/transforms"
)

// A state directory's start-up: an unfinished last drain is reported; a run that cannot
// keep state is refused with a RefusedError; no directory is no Run.
func TestBegin(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, statedir.MarkerName), []byte(`{"state":"running"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	streaming := pipeline.Options{InputSubscription: "projects/p/subscriptions/s"}
	for _, tc := range []struct {
		name    string
		path    string
		runner  string
		opts    pipeline.Options
		refused bool
		want    string
	}{
		{"no state directory", "", "prism", streaming, false, ""},
		{"unfinished drain", dir, "prism", streaming, false, "did not finish its drain: what it changed is lost; restoring nothing"},
		{"file input", dir, "prism", pipeline.Options{Input: "in.jsonl"}, true, "needs --input_subscription"},
		{"remote runner", dir, "dataflow", streaming, true, "--runner prism"},
		{"with a restore", dir, "prism", pipeline.Options{InputSubscription: "projects/p/subscriptions/s", Restore: "x"}, true, "--restore"},
		{"arrival order", dir, "prism", pipeline.Options{Options: transforms.Options{Ordering: transforms.ArrivalOrder}, InputSubscription: "projects/p/subscriptions/s"}, true, "event-time ordering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warn bytes.Buffer
			opts := tc.opts
			r, err := runstate.Begin(tc.path, tc.runner, &opts, &warn)
			t.Cleanup(r.Close) // nil when refused: does nothing
			var refused *runstate.RefusedError
			if tc.refused {
				if !errors.As(err, &refused) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v; want a refusal saying %q", err, tc.want)
				}
				return
			}
			if err != nil || !strings.Contains(warn.String(), tc.want) {
				t.Fatalf("error %v, warnings %q; want none and %q", err, warn.String(), tc.want)
			}
			if (r == nil) != (tc.path == "") || (r != nil && opts.Capture == "") {
				t.Fatalf("run %v, capture %q", r, opts.Capture)
			}
		})
	}
}
