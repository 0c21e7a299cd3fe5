package cli

import (
	"errors"

	"github.com/beamagents/beamagents/internal/runstate"
	"github.com/beamagents/beamagents/internal/runstatus"
	"github.com/beamagents/beamagents/internal/streamrun"
)

// runStreaming runs a pipeline with a Pub/Sub input until it is interrupted and drained
// (streamrun): exit status 2 for a run that cannot keep state in --state_dir, 130 for one
// stopped before its drain finished, 1 for a failure.
func runStreaming(e *env, runner string, s *runSettings) int {
	quietRunner(e)
	r := &streamrun.Run{Runner: runner, Options: s.Options, StateDir: s.stateDir, Every: s.statusEvery, Stdout: e.stdout, Stderr: e.stderr}
	err := r.Go()
	var refused *runstate.RefusedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &refused):
		e.errorf("%v", err)
		return 2
	case errors.Is(err, streamrun.ErrStopped):
		e.errorf("%v", err)
		return 130
	}
	e.errorf("%v", err)
	return 1
}

// quietRunner keeps the runner's informational logging off the terminal, unless
// --verbose_runner.
func quietRunner(e *env) {
	if !verboseRunner() {
		runstatus.QuietRunner(e.stderr)
	}
}
