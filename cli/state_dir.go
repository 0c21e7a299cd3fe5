package cli

import (
	"errors"
	"time"

	"github.com/beamagents/beamagents/internal/runstate"
	"github.com/beamagents/beamagents/pipeline"
)

// beginStateDir opens --state_dir (path) for a streaming run (runstate.Begin) and says why
// when it cannot: exit status 2 for a run that cannot keep state, 1 for a directory that
// cannot be opened. It returns nil and exit status 0 when the flag is unset.
func beginStateDir(e *env, runner, path string, opts *pipeline.Options) (*runstate.Run, int) {
	r, err := runstate.Begin(path, runner, opts, e.stderr)
	var refused *runstate.RefusedError
	switch {
	case errors.As(err, &refused):
		e.errorf("%v", err)
		return nil, 2
	case err != nil:
		e.errorf("%v", err)
		return nil, 1
	}
	return r, 0
}

// commitStateDir writes the drained run's state into its directory (runstate.Run.Commit).
func commitStateDir(e *env, r *runstate.Run, watermark time.Time) int {
	if err := r.Commit(watermark, e.stdout); err != nil {
		e.errorf("%v", err)
		return 1
	}
	return 0
}
