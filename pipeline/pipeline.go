package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/transforms"
)

// Options describe a whole pipeline: envelopes from files, one registered agent, and a file
// sink per output.
type Options struct {
	// Agent, Config, Keyring, Ordering and OrderResolutionMs configure RunAgent.
	Agent             string
	Config            []byte
	Keyring           string
	Ordering          transforms.Ordering
	OrderResolutionMs int64

	// Input is a file glob of envelope records; InputFormat is transforms.JSON (JSON Lines of
	// protojson AgentEnvelopes) or transforms.Binary (varint-length-delimited binary
	// envelopes). Empty selects JSON for *.jsonl and *.json, Binary otherwise.
	Input       string
	InputFormat transforms.Format

	// Restore is an optional file glob of StateSnapshot records (as the snapshots output
	// writes them: *.jsonl as JSON Lines, else binary) restored into keys without state before
	// their envelopes run: how a key moves between pipelines or from another runtime.
	Restore string

	// OutputDir receives, per output, NAME.binpb and NAME.jsonl (see WriteRecords).
	OutputDir string

	// InputSubscription (projects/P/subscriptions/S) adds a Pub/Sub input, which makes the
	// pipeline a streaming one; the topics (projects/P/topics/T) add Pub/Sub outputs. Each is
	// optional; files and Pub/Sub mix freely, given at least one input and one output.
	InputSubscription                                                   string
	IntentsTopic, TracesTopic, FinalsTopic, SnapshotsTopic, ErrorsTopic string
	// PubSub configures the Pub/Sub steps; Run sets Native when the runner is dataflow.
	PubSub pubsub.Options
}

// Output names: the files under OutputDir are these names with .binpb and .jsonl.
const (
	IntentsName     = "intents"
	TracesName      = "traces"
	FinalsName      = "finals"
	SnapshotsName   = "snapshots"
	DeadLettersName = "dead_letters"
)

// Outputs lists every output name with its message type, in a fixed order.
func Outputs() []struct {
	Name string
	Type protoreflect.FullName
} {
	return []struct {
		Name string
		Type protoreflect.FullName
	}{
		{IntentsName, (&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName()},
		{TracesName, (&pb.TraceEvent{}).ProtoReflect().Descriptor().FullName()},
		{FinalsName, (&pb.FinalReply{}).ProtoReflect().Descriptor().FullName()},
		{SnapshotsName, (&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName()},
		{DeadLettersName, (&pb.ActivationErrorRecord{}).ProtoReflect().Descriptor().FullName()},
	}
}

func (o Options) format() transforms.Format {
	if o.InputFormat != "" {
		return o.InputFormat
	}
	return formatOf(o.Input)
}

func formatOf(glob string) transforms.Format {
	switch strings.ToLower(filepath.Ext(glob)) {
	case ".jsonl", ".json":
		return transforms.JSON
	}
	return transforms.Binary
}

func (o Options) check() error {
	switch {
	case o.Agent == "":
		return fmt.Errorf("pipeline: no agent")
	case o.Input == "" && o.InputSubscription == "":
		return fmt.Errorf("pipeline: no input")
	case o.OutputDir == "" && len(o.topics()) == 0:
		return fmt.Errorf("pipeline: no output directory or topic")
	}
	return nil
}

// Build adds the pipeline to s: read → decode → RunAgent → sinks. Every record ends in exactly
// one output; undecodable ones in dead_letters. The agent is built once here, so an unknown
// agent or an invalid definition (an unbound case, a tool binding whose negotiation refuses,
// with its delta) stops the pipeline before it is submitted rather than on the workers.
func Build(s beam.Scope, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	if _, err := agent.Build(o.Agent, o.Config); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	var keyed beam.PCollection
	var deads []beam.PCollection
	if o.Input != "" {
		records, readDead := ReadRecords(s, o.Input, o.format())
		var decodeDead beam.PCollection
		keyed, decodeDead = transforms.DecodeEnvelopes(s, o.format(), records)
		deads = append(deads, readDead, decodeDead)
	}
	src, err := o.readPubSub(s)
	if err != nil {
		return err
	}
	keyed = flattenSome(s, keyed, src.Keyed)
	if o.Restore != "" {
		snaps, snapReadDead := ReadRecords(s.Scope("Restore"), o.Restore, formatOf(o.Restore))
		restores, restoreDead := transforms.DecodeSnapshots(s, formatOf(o.Restore), snaps)
		keyed = beam.Flatten(s, keyed, restores)
		deads = append(deads, snapReadDead, restoreDead)
	}
	out := transforms.RunAgent(s, transforms.Options{
		Agent: o.Agent, Config: o.Config, Keyring: o.Keyring,
		Ordering: o.Ordering, OrderResolutionMs: o.OrderResolutionMs,
	}, keyed)
	dead := flattenSome(s, append(deads, out.DeadLetters)...)
	cols := map[string]beam.PCollection{
		IntentsName: out.Intents, TracesName: flattenSome(s, out.Traces, src.Traces), FinalsName: out.Finals,
		SnapshotsName: out.Snapshots, DeadLettersName: flattenSome(s, dead, src.DeadLetters),
	}
	if o.OutputDir != "" {
		for _, o2 := range Outputs() {
			WriteRecords(s, o.OutputDir, o2.Name, o2.Type, cols[o2.Name])
		}
	}
	return o.publish(s, cols, dead, src)
}

// Result is what a run reports.
type Result struct {
	// Counters are the pipeline's beamagents counters (activations, model_calls,
	// state_reads, ...), summed over steps.
	Counters map[string]int64
}

// Run builds the pipeline and runs it on runner ("prism" when empty; any registered Beam Go
// runner: dataflow, flink, universal, ...), waiting for it to finish.
func Run(ctx context.Context, runner string, o Options) (*Result, error) {
	if runner == "" {
		runner = "prism"
	}
	o.PubSub.Native = o.PubSub.Native || runner == "dataflow"
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, o); err != nil {
		return nil, err
	}
	pr, err := beam.Run(ctx, runner, p)
	if err != nil {
		return nil, err
	}
	res := &Result{Counters: map[string]int64{}}
	if pr != nil {
		for _, c := range pr.Metrics().AllMetrics().Counters() {
			if c.Key.Namespace == "beamagents" {
				res.Counters[c.Key.Name] += c.Result()
			}
		}
	}
	return res, nil
}
