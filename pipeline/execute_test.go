package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/periodic"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register.Function3x0(tickEnvelope)
	// "support-any" is the support agent with a model that replies to anyone, any time.
	agent.Register("support-any", func([]byte) (*agent.Agent, error) {
		def, err := support.Definition([]byte(`{"response":{"case":"support.reply","fields":{"support.reply.text":"Hello!"}},"input_tokens":12,"output_tokens":3}`))
		if err != nil {
			return nil, err
		}
		def.Name = "support-any"
		return bindings.New(def)
	})
}

// tickEnvelope turns tick i of an unbounded sequence into a greeting from one of three
// customers, at the tick's event time.
func tickEnvelope(ts beam.EventTime, i int64, emit func([]byte)) {
	b, _ := proto.Marshal(&pb.AgentEnvelope{
		EntityKey:   fmt.Appendf(nil, "stream-%d", i%3),
		EventTimeMs: mtime.Time(ts).Milliseconds(),
		Payload:     &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("Hi, can you help me?")},
	})
	emit(b)
}

func jobServer(t testing.TB) (string, jobpb.JobServiceClient) {
	t.Helper()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	client, err := prism.CreateJobServer(context.Background(), prism.Options{Port: port})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("localhost:%d", port), client
}

// An unbounded pipeline (a periodic source into RunAgent and windowed, sharded sinks) runs
// through the Job API (universal runner, LOOPBACK workers) and writes window files while it
// runs; ending the context cancels the job on the job service.
func TestStreamingThroughJobServiceCancels(t *testing.T) {
	endpoint, client := jobServer(t)
	oldEndpoint, oldEnv := *jobopts.Endpoint, *jobopts.EnvironmentType
	*jobopts.Endpoint, *jobopts.EnvironmentType = endpoint, "LOOPBACK"
	defer func() { *jobopts.Endpoint, *jobopts.EnvironmentType = oldEndpoint, oldEnv }()

	out := filepath.Join(t.TempDir(), "out")
	p, s := beam.NewPipelineWithRoot()
	now := time.Now()
	seq := periodic.Sequence(s, beam.Create(s, periodic.NewSequenceDefinition(now, now.Add(time.Hour), 50*time.Millisecond)))
	records := beam.ParDo(s, tickEnvelope, seq)
	if err := pipeline.BuildFrom(s, pipeline.Options{Options: transforms.Options{Agent: "support-any"}, OutputDir: out, Shards: 2, Window: time.Second}, transforms.Binary, records); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := pipeline.Execute(ctx, "universal", p)
		errc <- err
	}()
	deadline := time.After(2 * time.Minute)
	for windows := 0; windows < 2; {
		select {
		case err := <-errc:
			t.Fatalf("the unbounded job ended by itself: %v", err)
		case <-deadline:
			cancel()
			t.Fatalf("no two windows of final replies written within two minutes")
		case <-time.After(200 * time.Millisecond):
		}
		files, _ := filepath.Glob(filepath.Join(out, "finals-*-*-0000?-of-00002.jsonl"))
		windows = len(files)
	}
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, pipeline.ErrCancelled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Execute after cancel = %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the job did not stop within a minute of its cancellation")
	}
	jobs, err := client.GetJobs(context.Background(), &jobpb.GetJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.GetJobInfo()) != 1 || jobs.GetJobInfo()[0].GetState() != jobpb.JobState_CANCELLED {
		t.Fatalf("jobs on the job service: %v", jobs.GetJobInfo())
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
