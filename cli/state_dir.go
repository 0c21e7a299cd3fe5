package cli

import (
	"fmt"
	"time"

	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/statedir"
	"github.com/beamagents/beamagents/transforms"
)

// stateRun is a streaming run's --state_dir: the directory, opened for this run, and the
// Capture its RunAgent records into. A nil *stateRun does nothing.
type stateRun struct {
	path string
	dir  *statedir.Dir
	cap  *statedir.Capture
}

// beginStateDir opens --state_dir (path) for a streaming run: it checks the run can keep
// state, says when the last run did not finish its drain, and points opts at the last drain's
// files and at a new Capture. It returns nil and exit status 0 when the flag is unset.
func beginStateDir(e *env, runner, path string, opts *pipeline.Options) (*stateRun, int) {
	switch {
	case path == "":
		return nil, 0
	case opts.InputSubscription == "":
		e.errorf("--state_dir keeps the state of a streaming run: it needs --input_subscription")
		return nil, 2
	case runner != "prism":
		e.errorf("--state_dir works where the workers run in this process (--runner prism); on %s the runner's own state is durable (docs/deploy.md)", runner)
		return nil, 2
	case opts.Restore != "":
		e.errorf("--state_dir restores the keys its last drain wrote: it does not combine with --restore")
		return nil, 2
	case opts.Ordering == transforms.ArrivalOrder || opts.Mode == pipeline.Batch:
		e.errorf("--state_dir needs the streaming mode with event-time ordering")
		return nil, 2
	}
	d, err := statedir.Begin(path)
	if err != nil {
		e.errorf("--state_dir: %v", err)
		return nil, 1
	}
	if d.Incomplete() {
		since := "nothing: every key starts empty"
		if d.Last.Generation > 0 {
			since = fmt.Sprintf("its last completed drain (generation %d, %d keys)", d.Last.Generation, d.Last.Keys)
		}
		fmt.Fprintf(e.stderr, "beamagents: warning: the last run with --state_dir %s did not finish its drain: what it changed is lost; restoring %s\n", path, since)
	}
	sr := &stateRun{path: path, dir: d, cap: statedir.NewCapture()}
	opts.Restore, opts.Pending = d.Restore()
	opts.Capture = sr.cap.ID()
	opts.PubSub.StartWatermark = d.Watermark()
	if d.Last.Generation > 0 {
		fmt.Fprintf(e.stderr, "restoring %d keys and %d envelopes from %s\n", d.Last.Keys, d.Last.Envelopes, path)
	}
	return sr, 0
}

// freeze makes the run's keys record their state instead of running, from now on (the drain).
func (s *stateRun) freeze() {
	if s != nil {
		s.cap.Freeze()
	}
}

// commit writes what the drained run recorded into the directory, with the input's
// watermark at the drain.
func (s *stateRun) commit(e *env, watermark time.Time) int {
	if s == nil {
		return 0
	}
	m, err := s.dir.Commit(s.cap, watermark)
	if err != nil {
		e.errorf("writing the state: %v", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "state of %d keys and %d envelopes written to %s\n", m.Keys, m.Envelopes, s.path)
	return 0
}

func (s *stateRun) close() {
	if s != nil {
		s.cap.Close()
	}
}
