package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrCancelled is returned (wrapping the context's cause) by Execute and Run when their
// context ends before the pipeline does and the job was cancelled through the Job API.
var ErrCancelled = errors.New("pipeline cancelled")

// portable reports whether runner submits through the Beam Job API (a job service at
// --endpoint): Prism, the universal runner and Flink, which is the universal runner.
func portable(runner string) bool {
	switch strings.ToLower(runner) {
	case "prism", "prismrunner", "universal", "portable", "portablerunner", "flink", "flinkrunner":
		return true
	}
	return false
}

// Execute runs a built pipeline on runner ("prism" when empty) and waits for it. On the
// portable runners (prism, universal, flink) the job has a name (--job_name, or a fresh one)
// and ending ctx cancels it through the Job API's Cancel, then waits for the job to stop and
// returns ErrCancelled; for prism without --endpoint the job service is one started in this
// process. On other runners (dataflow) ending ctx stops the wait only: cancel or drain the
// job with the runner's own tools. Runs on the portable runners pin Beam's process-wide job
// options for their duration, so they run one at a time within a process.
func Execute(ctx context.Context, runner string, p *beam.Pipeline) (beam.PipelineResult, error) {
	if runner == "" {
		runner = "prism"
	}
	if !portable(runner) {
		return beam.Run(ctx, runner, p)
	}
	endpoint, name, restore, err := pinJob(ctx, runner)
	if err != nil {
		return nil, err
	}
	defer restore()
	// Jobs of the same name already on the job service are someone else's: never cancel them.
	earlier := jobsNamed(endpoint, name)
	done := make(chan struct{})
	cancelled := make(chan error, 1)
	go func() {
		select {
		case <-done:
			cancelled <- nil
		case <-ctx.Done():
			cancelled <- cancelJob(endpoint, name, earlier, done)
		}
	}()
	pr, err := beam.Run(context.WithoutCancel(ctx), runner, p)
	close(done)
	if cerr := <-cancelled; ctx.Err() != nil {
		return pr, errors.Join(fmt.Errorf("%w: %w", ErrCancelled, context.Cause(ctx)), cerr)
	}
	return pr, err
}

// jobOptsMu serializes the runs of one process that pin Beam's process-wide job options.
var jobOptsMu sync.Mutex

// pinJob fixes the job's endpoint and name in Beam's job options for one run, and returns
// how to put them back.
func pinJob(ctx context.Context, runner string) (endpoint, name string, restore func(), err error) {
	jobOptsMu.Lock()
	oldEndpoint, oldEnv, oldName := *jobopts.Endpoint, *jobopts.EnvironmentType, *jobopts.JobName
	restore = func() {
		*jobopts.Endpoint, *jobopts.EnvironmentType, *jobopts.JobName = oldEndpoint, oldEnv, oldName
		jobOptsMu.Unlock()
	}
	if *jobopts.Endpoint == "" && strings.HasPrefix(strings.ToLower(runner), "prism") {
		if *jobopts.Endpoint, err = localJobServer(ctx); err != nil {
			restore()
			return "", "", nil, err
		}
		if *jobopts.EnvironmentType == "" {
			*jobopts.EnvironmentType = "loopback"
		}
	}
	if *jobopts.JobName == "" {
		*jobopts.JobName = fmt.Sprintf("beamagents-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return *jobopts.Endpoint, *jobopts.JobName, restore, nil
}

var local struct {
	once     sync.Once
	endpoint string
	err      error
}

// localJobServer starts Prism's job service in this process once and returns its endpoint.
func localJobServer(ctx context.Context) (string, error) {
	local.once.Do(func() {
		l, err := net.Listen("tcp", "localhost:0")
		if err != nil {
			local.err = err
			return
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if _, err := prism.CreateJobServer(context.WithoutCancel(ctx), prism.Options{Port: port}); err != nil {
			local.err = err
			return
		}
		local.endpoint = fmt.Sprintf("localhost:%d", port)
	})
	return local.endpoint, local.err
}

// jobsNamed returns the ids of the jobs named name on the job service (none when it cannot
// be asked).
func jobsNamed(endpoint, name string) map[string]bool {
	ids := map[string]bool{}
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return ids
	}
	defer cc.Close()
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	jobs, _ := jobpb.NewJobServiceClient(cc).GetJobs(ctx, &jobpb.GetJobsRequest{})
	for _, j := range jobs.GetJobInfo() {
		if j.GetJobName() == name {
			ids[j.GetJobId()] = true
		}
	}
	return ids
}

// cancelJob finds the job named name on the job service that is not one of earlier (it may not
// be submitted yet) and cancels it, until the run ends (done).
func cancelJob(endpoint, name string, earlier map[string]bool, done <-chan struct{}) error {
	cc, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cc.Close()
	client := jobpb.NewJobServiceClient(cc)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	cancelled := maps.Clone(earlier)
	for {
		// Errors are retried on the next tick: the job service may be busy or the job not
		// submitted yet.
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		jobs, _ := client.GetJobs(ctx, &jobpb.GetJobsRequest{})
		for _, j := range jobs.GetJobInfo() {
			if j.GetJobName() != name || cancelled[j.GetJobId()] {
				continue
			}
			if _, err := client.Cancel(ctx, &jobpb.CancelJobRequest{JobId: j.GetJobId()}); err == nil {
				cancelled[j.GetJobId()] = true
			}
		}
		stop()
		select {
		case <-done:
			return nil
		case <-tick.C:
		}
	}
}
