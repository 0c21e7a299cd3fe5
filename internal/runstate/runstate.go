package runstate

import (
	"fmt"
	"io"
	"time"

	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/statedir"
	"github.com/beamagents/beamagents/transforms"
)

// A RefusedError says why a run cannot keep state in a state directory: its settings, not
// the directory, are at fault.
type RefusedError struct{ Reason string }

func (r *RefusedError) Error() string { return r.Reason }

// Run is a streaming run's state directory, opened for this run, and the Capture its
// RunAgent records into. A nil *Run does nothing.
type Run struct {
	path string
	dir  *statedir.Dir
	cap  *statedir.Capture
}

// Begin opens the state directory path for a streaming run on runner: it checks the run
// can keep state, says on warn when the last run did not finish its drain, and points opts
// at the last drain's files and at a new Capture. It returns nil and no error when path is
// empty.
func Begin(path, runner string, opts *pipeline.Options, warn io.Writer) (*Run, error) {
	if path == "" {
		return nil, nil
	}
	if err := refusal(runner, opts); err != nil {
		return nil, err
	}
	d, err := statedir.Begin(path)
	if err != nil {
		return nil, fmt.Errorf("--state_dir: %w", err)
	}
	if d.Incomplete() {
		since := "nothing: every key starts empty"
		if d.Last.Generation > 0 {
			since = fmt.Sprintf("its last completed drain (generation %d, %d keys)", d.Last.Generation, d.Last.Keys)
		}
		fmt.Fprintf(warn, "beamagents: warning: the last run with --state_dir %s did not finish its drain: what it changed is lost; restoring %s\n", path, since)
	}
	r := &Run{path: path, dir: d, cap: statedir.NewCapture()}
	opts.Restore, opts.Pending = d.Restore()
	opts.Capture = r.cap.ID()
	opts.PubSub.StartWatermark = d.Watermark()
	if d.Last.Generation > 0 {
		fmt.Fprintf(warn, "restoring %d keys and %d envelopes from %s\n", d.Last.Keys, d.Last.Envelopes, path)
	}
	return r, nil
}

// refusal is why a run of opts on runner cannot keep state, or nil.
func refusal(runner string, opts *pipeline.Options) error {
	switch {
	case opts.InputSubscription == "":
		return &RefusedError{"--state_dir keeps the state of a streaming run: it needs --input_subscription"}
	case runner != "prism":
		return &RefusedError{fmt.Sprintf("--state_dir works where the workers run in this process (--runner prism); on %s the runner's own state is durable (docs/deploy.md)", runner)}
	case opts.Restore != "":
		return &RefusedError{"--state_dir restores the keys its last drain wrote: it does not combine with --restore"}
	case opts.Ordering == transforms.ArrivalOrder || opts.Mode == pipeline.Batch:
		return &RefusedError{"--state_dir needs the streaming mode with event-time ordering"}
	}
	return nil
}

// Freeze makes the run's keys record their state instead of running, from now on (the drain).
func (r *Run) Freeze() {
	if r != nil {
		r.cap.Freeze()
	}
}

// Commit writes what the drained run recorded into the directory, with the input's
// watermark at the drain, and says so on out.
func (r *Run) Commit(watermark time.Time, out io.Writer) error {
	if r == nil {
		return nil
	}
	m, err := r.dir.Commit(r.cap, watermark)
	if err != nil {
		return fmt.Errorf("writing the state: %w", err)
	}
	fmt.Fprintf(out, "state of %d keys and %d envelopes written to %s\n", m.Keys, m.Envelopes, r.path)
	return nil
}

// Close releases the run's Capture.
func (r *Run) Close() {
	if r != nil {
		r.cap.Close()
	}
}
