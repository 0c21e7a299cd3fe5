package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/otlpexport"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

// Options describe a whole pipeline: envelopes from files or Pub/Sub, one registered agent,
// and a file or Pub/Sub sink per output. The embedded transforms.Options configure RunAgent
// (the agent and its configuration, the keyring, ordering, result verification, the
// launch-time model, the state capture); the fields below are the pipeline's own.
type Options struct {
	transforms.Options

	// Input is a file glob of envelope records; InputFormat is transforms.JSON (JSON Lines of
	// protojson AgentEnvelopes) or transforms.Binary (varint-length-delimited binary
	// envelopes). Empty selects JSON for *.jsonl and *.json, Binary otherwise.
	Input       string
	InputFormat transforms.Format

	// Restore is an optional file glob of StateSnapshot records (as the snapshots output
	// writes them: *.jsonl as JSON Lines, else binary) restored into keys without state before
	// their envelopes run: how a key moves between pipelines or from another runtime.
	Restore string

	// Resume is an optional file glob of a previous run's snapshots output: the keys that run
	// parked at the end of its input (transforms.AtEndPark) are restored before their
	// envelopes run, and its other snapshots (export requests') are passed over. It is how a
	// bounded run continues a previous one's waiting keys with their answers as input (`run
	// --resume`).
	Resume string

	// Pending is an optional file glob of binary envelope records run as input beside the
	// others: with Restore, the envelopes that drained keys had not run yet (`run
	// --state_dir`, package statedir, whose Capture the embedded Options.Capture names).
	Pending string

	// OutputDir receives, per output, NAME.binpb and NAME.jsonl (see WriteRecords), or with
	// Shards > 0 the shards of each output (see WriteShards).
	OutputDir string

	// Shards > 0 writes each output as that many shards written in parallel (WriteShards)
	// instead of one sorted file gathered on one worker (WriteRecords, the default, for demos
	// and tests). Window > 0 cuts the sharded outputs into fixed event-time windows, which an
	// unbounded input needs.
	Shards int
	Window time.Duration

	// OTLP, when its Endpoint is set, also exports the trace events as OpenTelemetry spans
	// (ExportTraces).
	OTLP otlpexport.Options

	// Mode is Streaming (the default: RunAgent, keyed state and timers) or Batch (the bounded
	// fast path: transforms.RunAgentBatch, the same outputs for a bounded input).
	Mode Mode

	// InputSubscription (projects/P/subscriptions/S) adds a Pub/Sub input, which makes the
	// pipeline a streaming one; the topics (projects/P/topics/T) add Pub/Sub outputs. Each is
	// optional; files and Pub/Sub mix freely, given at least one input and one output.
	InputSubscription                                                   string
	IntentsTopic, TracesTopic, FinalsTopic, SnapshotsTopic, ErrorsTopic string
	// PubSub configures the Pub/Sub steps; Run sets Native when the runner is dataflow.
	PubSub pubsub.Options

	// LedgerOptions add the cost ledger output (ledger.go).
	LedgerOptions
	// Shadow, when its Agent is set, runs a candidate agent beside production on the same
	// envelopes, its effects quarantined (shadow.go).
	Shadow ShadowOptions
}

// Mode selects how the pipeline runs the agent.
type Mode string

// Modes.
const (
	Streaming Mode = "streaming"
	Batch     Mode = "batch"
)

// Output names: the files under OutputDir are these names with .binpb and .jsonl.
const (
	IntentsName     = records.IntentsName
	TracesName      = records.TracesName
	FinalsName      = records.FinalsName
	SnapshotsName   = records.SnapshotsName
	DeadLettersName = records.DeadLettersName
)

// Outputs lists every output with its name and message type, in their fixed order.
func Outputs() []records.Kind { return records.Kinds() }

func (o Options) format() transforms.Format {
	if o.InputFormat != "" {
		return o.InputFormat
	}
	return records.FormatOf(o.Input)
}

func (o Options) check() error {
	switch {
	case o.Agent == "":
		return fmt.Errorf("pipeline: no agent")
	case o.Input == "" && o.InputSubscription == "":
		return fmt.Errorf("pipeline: no input")
	case o.OutputDir == "" && o.topics() == records.Set[string]{}:
		return fmt.Errorf("pipeline: no output directory or topic")
	case o.Mode != "" && o.Mode != Streaming && o.Mode != Batch:
		return fmt.Errorf("pipeline: unknown mode %q (streaming or batch)", o.Mode)
	case o.Restore != "" && o.Ordering == transforms.ArrivalOrder && o.Mode != Batch:
		// A restore applies only to a key without state: in arrival order an envelope that
		// arrives first would run on fresh state and the restore would then be refused.
		return fmt.Errorf("pipeline: a restore needs event-time ordering (--ordering event_time), which runs a key's restore before its envelopes")
	case o.Resume != "" && o.Ordering == transforms.ArrivalOrder && o.Mode != Batch:
		return fmt.Errorf("pipeline: resuming parked keys needs event-time ordering (--ordering event_time), which runs a key's restore before its envelopes")
	case o.AtEnd == transforms.AtEndPark && (o.InputSubscription != "" || o.Input == ""):
		return fmt.Errorf("pipeline: parking waiting keys at the end of the input is for bounded (file) inputs; a streaming run keeps them waiting")
	case (o.Capture != "" || o.Pending != "") && (o.Ordering == transforms.ArrivalOrder || o.Mode == Batch):
		return fmt.Errorf("pipeline: keeping state across restarts needs the streaming mode with event-time ordering")
	}
	if err := o.Options.Check(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return nil
}

// Build adds the pipeline to s: read → decode → RunAgent → sinks. Every record ends in exactly
// one output; undecodable ones in dead_letters. The options are checked first, the embedded
// transforms.Options by their own Check (which builds the agent), so an unknown agent or an
// invalid definition (an unbound case, a tool binding whose negotiation refuses, with its
// delta) stops the pipeline before any step is added rather than on the workers.
func Build(s beam.Scope, o Options) error {
	if err := o.check(); err != nil {
		return err
	}
	var keyed beam.PCollection
	var deads []beam.PCollection
	if o.Input != "" {
		recs, readDead := ReadRecords(s, o.Input, o.format())
		var decodeDead beam.PCollection
		keyed, decodeDead = transforms.DecodeEnvelopes(s, o.format(), recs)
		deads = append(deads, readDead, decodeDead)
	}
	src, err := o.readPubSub(s)
	if err != nil {
		return err
	}
	return o.buildKeyed(s, flattenSome(s, keyed, src.Keyed), src, deads, o.InputSubscription == "")
}

// BuildFrom adds everything after the source to s: decode the records (of format) → restore
// → RunAgent → sinks. dead are the source's own dead letters, written with the others. Build
// calls the same with the file and Pub/Sub sources; another source (an unbounded one, say)
// calls it with its own records, and then needs Options.Shards and Options.Window, since the
// sorted single-file sink waits for the end of the input. Its outputs are counted record by
// record (CountRecords), as its source may be unbounded.
func BuildFrom(s beam.Scope, o Options, format transforms.Format, records beam.PCollection, dead ...beam.PCollection) error {
	keyed, decodeDead := transforms.DecodeEnvelopes(s, format, records)
	return o.buildKeyed(s, keyed, pubsub.Source{}, append(dead, decodeDead), false)
}

// buildKeyed adds restore → RunAgent → sinks for the keyed envelopes of the sources; bounded
// says that they are all bounded (files), so the outputs are counted once whole
// (CountRecords).
func (o Options) buildKeyed(s beam.Scope, keyed beam.PCollection, src pubsub.Source, deads []beam.PCollection, bounded bool) error {
	if o.Restore != "" {
		snaps, snapReadDead := ReadRecordsOf(s.Scope("Restore"), o.Restore, records.FormatOf(o.Restore), (&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName())
		restores, restoreDead := transforms.DecodeSnapshots(s, records.FormatOf(o.Restore), snaps)
		keyed = beam.Flatten(s, keyed, restores)
		deads = append(deads, snapReadDead, restoreDead)
	}
	if o.Resume != "" {
		rs := s.Scope("Resume")
		snaps, snapReadDead := ReadRecordsOf(rs, o.Resume, records.FormatOf(o.Resume), (&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName())
		restores, restoreDead := transforms.DecodeParked(rs, records.FormatOf(o.Resume), snaps)
		keyed = beam.Flatten(s, keyed, restores)
		deads = append(deads, snapReadDead, restoreDead)
	}
	if o.Pending != "" {
		ps := s.Scope("Pending")
		recs, readDead := ReadRecords(ps, o.Pending, transforms.Binary)
		pending, decodeDead := transforms.DecodeEnvelopes(ps, transforms.Binary, recs)
		keyed = beam.Flatten(s, keyed, pending)
		deads = append(deads, readDead, decodeDead)
	}
	run := transforms.TryRunAgent
	if o.Mode == Batch {
		run = transforms.TryRunAgentBatch
	}
	out, err := run(s, o.Options, keyed)
	if err != nil {
		return err
	}
	if err := o.buildShadow(s, run, keyed, out); err != nil {
		return err
	}
	dead := flattenSome(s, append(deads, out.DeadLetters)...)
	cols := records.Set[beam.PCollection]{out.Intents, flattenSome(s, out.Traces, src.Traces), out.Finals,
		out.Snapshots, flattenSome(s, dead, src.DeadLetters)}
	CountRecords(s, cols, bounded)
	if o.OTLP.Endpoint != "" {
		ExportTraces(s, o.OTLP, cols.Of(records.OutTrace))
	}
	if err := o.buildLedger(s, cols.Of(records.OutTrace), bounded); err != nil {
		return err
	}
	for _, k := range records.Kinds() {
		switch {
		case o.OutputDir == "":
		case o.Shards > 0:
			WriteShards(s, o.OutputDir, k.Name, k.Type, cols.Of(k.Out), o.Shards, o.Window)
		default:
			WriteRecords(s, o.OutputDir, k.Name, k.Type, cols.Of(k.Out))
		}
	}
	return o.publish(s, cols, dead, src)
}

// Result is what a run reports.
type Result struct {
	// Counters are the pipeline's beamagents counters (activations, model_calls,
	// state_reads, cache_hits, input_tokens, intents, dead_letters.<reason>, ...), summed
	// over steps.
	Counters map[string]int64
	// Distributions are its beamagents distributions (activation_latency_us,
	// state_bytes_read_per_call, state_bytes_written_per_call), merged over steps.
	Distributions map[string]Distribution
}

// A Distribution summarizes the values a distribution metric saw.
type Distribution struct {
	Count, Sum, Min, Max int64
}

// Run builds the pipeline and runs it on runner ("prism" when empty; any registered Beam Go
// runner: dataflow, flink, universal, ...), waiting for it to finish (see Execute). A run
// that parks its waiting keys (transforms.AtEndPark) without InputEndMs first reads where
// its input ends (InputEnd).
func Run(ctx context.Context, runner string, o Options) (*Result, error) {
	if runner == "" {
		runner = "prism"
	}
	o.PubSub.Native = o.PubSub.Native || runner == "dataflow"
	if o.AtEnd == transforms.AtEndPark && o.InputEndMs == nil && o.InputSubscription == "" && o.Input != "" {
		end, err := InputEnd(ctx, o)
		if err != nil {
			return nil, err
		}
		o.InputEndMs = &end
	}
	p, s := beam.NewPipelineWithRoot()
	if err := Build(s, o); err != nil {
		return nil, err
	}
	shadow := shadowStepsOf(p)
	pr, err := Execute(ctx, runner, p)
	if err != nil {
		return nil, err
	}
	res := &Result{Counters: map[string]int64{}, Distributions: map[string]Distribution{}}
	if pr == nil {
		return res, nil
	}
	all := pr.Metrics().AllMetrics()
	for _, c := range all.Counters() {
		if c.Key.Namespace == transforms.MetricsNamespace {
			res.Counters[shadow.metricName(c.Key.Step, c.Key.Name)] += c.Result()
		}
	}
	for _, d := range all.Distributions() {
		if d.Key.Namespace != transforms.MetricsNamespace {
			continue
		}
		name := shadow.metricName(d.Key.Step, d.Key.Name)
		v, prev := d.Result(), res.Distributions[name]
		if prev.Count > 0 {
			v.Min, v.Max = min(v.Min, prev.Min), max(v.Max, prev.Max)
		}
		res.Distributions[name] = Distribution{Count: prev.Count + v.Count, Sum: prev.Sum + v.Sum, Min: v.Min, Max: v.Max}
	}
	return res, nil
}
