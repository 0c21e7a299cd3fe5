package streamrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/internal/runreport"
	"github.com/beamagents/beamagents/internal/runstate"
	"github.com/beamagents/beamagents/internal/runstatus"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
)

// ErrStopped ends a run stopped (a second interrupt) before its drain finished.
var ErrStopped = errors.New("stopped before the drain finished: unacknowledged messages will be redelivered")

// Run is one streaming run.
type Run struct {
	Runner   string
	Options  pipeline.Options
	StateDir string        // keeps every key's state across restarts (runstate), when set
	Every    time.Duration // how often the status line is rewritten
	// Stdout takes the outcome (state written, drained, counters); Stderr the status line
	// and progress notes.
	Stdout, Stderr io.Writer
}

// Go runs r until it is interrupted and drained. A *runstate.RefusedError says its options
// cannot keep state in r.StateDir.
func (r *Run) Go() error {
	opts := r.Options
	sd, err := runstate.Begin(r.StateDir, r.Runner, &opts, r.Stderr)
	if err != nil {
		return err
	}
	defer sd.Close()
	run := pubsub.NewRun()
	defer run.Close()
	opts.PubSub.Run = run.ID()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)

	type result struct {
		res *pipeline.Result
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		res, err := pipeline.Run(ctx, r.Runner, opts)
		done <- result{res, err}
	}()
	fmt.Fprintf(r.Stderr, "streaming from %s on %s; Ctrl-C drains\n", opts.InputSubscription, r.Runner)
	tick := time.NewTicker(r.Every)
	defer tick.Stop()
	prev := progress.Take()
	status := func() string {
		now := progress.Take()
		line := runstatus.Streaming(run.Status(), now.At, now, prev, runstatus.Breakers())
		prev = now
		return line
	}
	for {
		select {
		case <-sig:
			if run.Draining() {
				fmt.Fprintln(r.Stderr, "\nstopping now")
				cancel()
				continue
			}
			fmt.Fprintln(r.Stderr, "\ndraining: no more pulls; in-flight bundles finish and are acknowledged (Ctrl-C again stops at once)")
			sd.Freeze()
			run.Drain()
		case <-tick.C:
			fmt.Fprintf(r.Stderr, "\r%s", status())
		case res := <-done:
			fmt.Fprintf(r.Stderr, "\r%s\n", status())
			return r.end(ctx, res.res, res.err, sd, run.Status().Watermark, start)
		}
	}
}

// end is the outcome of the run once its pipeline returned: the drain's state committed,
// then how long it ran and its counters.
func (r *Run) end(ctx context.Context, res *pipeline.Result, err error, sd *runstate.Run, watermark time.Time, start time.Time) error {
	switch {
	case err != nil && ctx.Err() != nil:
		return ErrStopped
	case err != nil:
		return fmt.Errorf("pipeline failed: %w", err)
	}
	if err := sd.Commit(watermark, r.Stdout); err != nil {
		return err
	}
	fmt.Fprintf(r.Stdout, "drained after %s on %s\n", time.Since(start).Round(time.Millisecond), r.Runner)
	if res != nil {
		runreport.Counters(r.Stdout, res)
	}
	return nil
}
