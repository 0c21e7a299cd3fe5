package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/beamagents/beamagents/agent"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/outfiles"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/transforms"
)

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

// noModelHelp explains the refusal to run an agent that asks a model it does not have.
const noModelHelp = `agent %q asks a model (it declares a proposal schema) and has no model of its own, which
--model %s keeps: every activation that asks it would be dead-lettered as model_error. Choose a
model with --model openai or --model anthropic (with --model_name, --base_url and --api_key), or
give the agent one (agent.Definition.Model).`

// modelless reports whether the run cannot succeed for want of a model: its agent declares a
// proposal schema, which only a model's answers fill, has no model of its own, and the run
// chooses none (--model scripted keeps the agent's). A handler agent without a proposal
// schema may never ask a model: it is left to run, and the run's outcome says what happened.
// An agent that does not build is left to the pipeline to report.
func modelless(o pipeline.Options) bool {
	if o.Model.Hosted() {
		return false
	}
	a, err := agent.Build(o.Agent, o.Config)
	if err != nil || a.Schema() == nil {
		return false
	}
	return !a.HasModel()
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
	return outfiles.Globs(append(names, pipeline.LedgerName)...)
}

// runFileChecks are run's checks of its files, after every other check: the input and
// restore files and their types, then the output folder, created (or emptied of an earlier
// run's files, with --replace) only when everything else passed.
func runFileChecks(s *runSettings) []check {
	ctx := context.Background()
	return []check{
		when(s.Input != "", inputGlob(ctx, "input", s.Input, envelopeType)),
		when(s.Restore != "", inputGlob(ctx, "restore", s.Restore, snapshotType)),
		when(s.Resume != "", resumeDir(ctx, s.resume, s.Resume)),
		outputDir(ctx, "output_dir", s.OutputDir, s.replace, runOutputs(), [2]string{"input", s.Input}, [2]string{"restore", s.Restore},
			[2]string{"resume", s.Resume}),
	}
}

// resumeDir accepts a previous run's output folder holding its binary snapshots output
// (glob, snapshots.binpb or its shards).
func resumeDir(ctx context.Context, dir, glob string) check {
	return func() error {
		if st, err := os.Stat(dir); !strings.Contains(dir, "://") && (err != nil || !st.IsDir()) {
			return refuseFlag("resume", "%s is not a folder: give the --output_dir of the run to resume", dir)
		}
		if _, err := listGlob(ctx, "resume", glob); err != nil {
			return refuseFlag("resume", "%s holds no snapshots output (%s.binpb): give the --output_dir of the run to resume", dir, pipeline.SnapshotsName)
		}
		return inputGlob(ctx, "resume", glob, snapshotType)()
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
	if err := outfiles.Remove(context.Background(), dir, runOutputs()); err != nil {
		e.errorf("removing the failed run's outputs from %s: %v", dir, err)
		return
	}
	e.errorf("the run failed (%s); no output kept in %s", cause, dir)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
