package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/model/hosted"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

// runCheckFlags are the run flags of the start-up checks below.
var runCheckFlags struct {
	once          sync.Once
	allowUnsigned *bool
	verifyResults *string
}

func defineRunCheckFlags() {
	runCheckFlags.once.Do(func() {
		runCheckFlags.allowUnsigned = flag.Bool("allow_unsigned_intents", false,
			"run an agent that emits intents without --keyring: its intents are emitted unsigned "+
				"(an effector verifying with --verify off or permissive accepts them; require refuses them)")
		runCheckFlags.verifyResults = flag.String("verify_results", "",
			"verification of tool results and approvals against --keyring: off, permissive or require "+
				"(default: require with --keyring, off without one)")
	})
}

// resultsMode resolves --verify_results, which its check parsed into o: by default require
// when the run has a keyring and off when it has none (its intents are unsigned too, and
// nothing could be verified).
func resultsMode(o *transforms.Options) error {
	switch m := o.VerifyResults; {
	case m == nil && o.Keyring != "":
		require := intent.ModeRequire
		o.VerifyResults = &require
	case m != nil && *m != intent.ModeOff && o.Keyring == "":
		return fmt.Errorf("--verify_results %s needs --keyring (the key that verifies results and approvals), or --verify_results off", *m)
	}
	return nil
}

// noKeyringHelp explains the refusal to run an agent that emits intents without a keyring.
const noKeyringHelp = `agent %q emits tool or approval intents and --keyring is not set, so every intent would be
dead-lettered as signing_failed. Pass --keyring env:VAR or file:PATH to sign them, or
--allow_unsigned_intents to emit them unsigned (an effector verifying with --verify off or
--verify permissive accepts unsigned intents; --verify require refuses them).`

// unsignedIntents reports whether the run would emit intents it cannot sign without the
// user's consent. An agent that does not build is left to the pipeline to report.
func unsignedIntents(o pipeline.Options) bool {
	if o.Keyring != "" || o.AllowUnsignedIntents {
		return false
	}
	a, err := agent.Build(o.Agent, o.Config)
	return err == nil && a.EmitsIntents()
}

// runners are the Beam runners this binary links (run.go imports them).
var runnerNames = []string{"prism", "dataflow", "flink", "universal", "PrismRunner", "DataflowRunner", "FlinkRunner", "PortableRunner", "portable"}

// localRunner reports whether the pipeline's workers run in this process, where the launcher
// reads references the way the workers will.
func localRunner(runner string) bool { return runner == "prism" || runner == "PrismRunner" }

var (
	envelopeType = (&pb.AgentEnvelope{}).ProtoReflect().Descriptor().FullName()
	snapshotType = (&pb.StateSnapshot{}).ProtoReflect().Descriptor().FullName()
)

// runOutputs are the files a run writes under --output_dir.
func runOutputs() []string {
	var names []string
	for _, o := range pipeline.Outputs() {
		names = append(names, o.Name)
	}
	return outputGlobs(names...)
}

// runChecks are run's launch-time checks of its flags (see checkFlags).
func runChecks(o *pipeline.Options) []check {
	m, p, f := &modelFlags, &productionFlags, &pubsubFlags
	local := localRunner(runnerName())
	return []check{
		noArgs(flag.CommandLine),
		registered("agent", o.Agent, "agent", agent.Registered()),
		registered("runner", runnerName(), "runner", runnerNames),
		oneOf("mode", string(o.Mode), string(pipeline.Streaming), string(pipeline.Batch)),
		oneOf("ordering", string(o.Ordering), string(transforms.EventTimeOrder), string(transforms.ArrivalOrder)),
		when(o.InputFormat != "", oneOf("input_format", string(o.InputFormat), string(transforms.JSON), string(transforms.Binary))),
		atLeast("shards", *p.shards, 0),
		atMost("shards", *p.shards, maxShards),
		nonNegative("window", *p.window),
		when(*p.window > 0 && *p.shards == 0, func() error { return refuseFlag("window", "needs --shards N (windowed outputs are sharded)") }),
		oneOf("otlp_protocol", *p.otlpProtocol, "grpc", "http"),
		atLeast("order_resolution_ms", *f.orderResolutionMs, 0),
		positive("dedup_window", *f.dedupWindow),
		positive("status_interval", *f.statusEvery),
		oneOf("model", *m.provider, hosted.Providers()...),
		baseURL("base_url", *m.provider, *m.baseURL),
		keyRef("api_key", *m.apiKey, local),
		positive("model_timeout", *m.timeout),
		positive("model_call_timeout", *m.callTimeout),
		atLeast("model_max_attempts", *m.maxAttempts, 1),
		atMost("model_max_attempts", *m.maxAttempts, 100),
		atLeast("model_concurrency", *m.concurrency, 1),
		atLeast("model_rpm", *m.rpm, 0),
		atLeast("model_tpm", *m.tpm, 0),
		positive("model_breaker_cooldown", *m.breakerCooldown),
		smallFile("model_fallback_file", *m.fallbackFile, maxConfigBytes),
		smallFile("agent_config", *runFlags.conf, maxConfigBytes),
		when(*runCheckFlags.verifyResults != "", verification("verify_results", *runCheckFlags.verifyResults, func(m intent.Mode) { o.VerifyResults = &m })),
		keyringRef("keyring", o.Keyring, local),
	}
}

// runFileChecks are run's checks of its files, after every other check: the input and
// restore files and their types, then the output folder, created (or emptied of an earlier
// run's files, with --replace) only when everything else passed.
func runFileChecks(o pipeline.Options) []check {
	ctx := context.Background()
	return []check{
		when(o.Input != "", inputGlob(ctx, "input", o.Input, envelopeType)),
		when(o.Restore != "", inputGlob(ctx, "restore", o.Restore, snapshotType)),
		outputDir(ctx, "output_dir", o.OutputDir, *runFlags.replace, runOutputs(), [2]string{"input", o.Input}, [2]string{"restore", o.Restore}),
	}
}

// maxShards bounds --shards: each shard is a pair of files per output and window.
const maxShards = 10000

// dropOutputs removes the files a failed run wrote under dir: the folder held none of them
// when it started (outputDir), so whatever is there is this run's, and incomplete.
// Its last line repeats the failure's innermost cause, which a runner's error puts last.
func dropOutputs(e *env, dir string, failure error) {
	cause := lastLine(failure.Error())
	if dir == "" {
		e.errorf("the run failed: %s", cause)
		return
	}
	if err := removeOutputs(context.Background(), dir, runOutputs()); err != nil {
		e.errorf("removing the failed run's outputs from %s: %v", dir, err)
		return
	}
	e.errorf("the run failed (%s); no output kept in %s", cause, dir)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
