package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/beamagents/beamagents/internal/progress"
	"github.com/beamagents/beamagents/internal/runstatus"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
)

// runStreaming runs a pipeline with a Pub/Sub input until it is interrupted: the first
// SIGINT or SIGTERM drains it (the source stops pulling, in-flight bundles finish and their
// messages are acknowledged, then the job ends as a bounded one does), a second one stops it
// at once. A status line on stderr shows what it did so far.
func runStreaming(e *env, runner string, s *runSettings) int {
	opts := s.Options
	sd, code := beginStateDir(e, runner, s.stateDir, &opts)
	if code != 0 {
		return code
	}
	defer sd.Close()
	run := pubsub.NewRun()
	defer run.Close()
	opts.PubSub.Run = run.ID()
	quietRunner(e)
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
		res, err := pipeline.Run(ctx, runner, opts)
		done <- result{res, err}
	}()
	fmt.Fprintf(e.stderr, "streaming from %s on %s; Ctrl-C drains\n", opts.InputSubscription, runner)
	tick := time.NewTicker(s.statusEvery)
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
				fmt.Fprintln(e.stderr, "\nstopping now")
				cancel()
				continue
			}
			fmt.Fprintln(e.stderr, "\ndraining: no more pulls; in-flight bundles finish and are acknowledged (Ctrl-C again stops at once)")
			sd.Freeze()
			run.Drain()
		case <-tick.C:
			fmt.Fprintf(e.stderr, "\r%s", status())
		case r := <-done:
			fmt.Fprintf(e.stderr, "\r%s\n", status())
			switch {
			case r.err != nil && ctx.Err() != nil:
				e.errorf("stopped before the drain finished: unacknowledged messages will be redelivered")
				return 130
			case r.err != nil:
				e.errorf("pipeline failed: %v", r.err)
				return 1
			}
			if code := commitStateDir(e, sd, run.Status().Watermark); code != 0 {
				return code
			}
			fmt.Fprintf(e.stdout, "drained after %s on %s\n", time.Since(start).Round(time.Millisecond), runner)
			if r.res != nil {
				printCounters(e, r.res)
			}
			return 0
		}
	}
}

// quietRunner keeps the runner's informational logging off the terminal, unless
// --verbose_runner.
func quietRunner(e *env) {
	if !verboseRunner() {
		runstatus.QuietRunner(e.stderr)
	}
}
