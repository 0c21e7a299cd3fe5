package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/runreport"
	"github.com/beamagents/beamagents/internal/runstatus"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func init() {
	register(&command{name: "demo", summary: "run the example support agent on Prism and summarize what it did", run: runDemo,
		absent: func() bool { return demo.Agent == "" }})
	register(&command{name: "run", summary: "run a registered agent over envelope files on a Beam runner", run: runPipeline})
}

var verbose = flag.Bool("verbose_runner", false, "show the Beam runner's informational logging")

func verboseRunner() bool { return *verbose }

func runPipeline(e *env, args []string) int {
	defineRunFlags()
	resetFlags()
	flag.CommandLine.Init(flag.CommandLine.Name(), flag.ContinueOnError)
	flag.CommandLine.SetOutput(e.stderr)
	flag.CommandLine.Usage = func() {}
	switch err := flag.CommandLine.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		printRunHelp(e.stdout)
		return 0
	case err != nil:
		fmt.Fprintf(e.stderr, "usage: %s\n(beamagents run --help lists every flag)\n", runUsage)
		return 2
	}
	s := readRunFlags()
	if s.Agent == "" || s.Input == "" && s.InputSubscription == "" || s.OutputDir == "" && !s.anyTopic() {
		e.errorf("usage: beamagents run --agent NAME (--input GLOB | --input_subscription SUB) (--output_dir DIR | --intents_topic T ...) [--runner prism|dataflow|flink|universal] [--keyring REF] [--verify_results off|permissive|require] [--memory_store REF] [Beam flags]\nregistered agents: %v", agent.Registered())
		return 2
	}
	if code, ok := checkFlags(e, runChecks(s)...); !ok {
		return code
	}
	if err := s.finish(); err != nil {
		e.errorf("%v", err)
		return 2
	}
	opts := s.Options
	if unsignedIntents(opts) {
		e.errorf(noKeyringHelp, opts.Agent)
		return 2
	}
	if modelless(opts) {
		e.errorf(noModelHelp, opts.Agent, opts.Model.Provider)
		return 2
	}
	if code := checkSecretRefs(e, runnerName(), opts); code != 0 {
		return code
	}
	if code, ok := checkFlags(e, runFileChecks(s)...); !ok {
		return code
	}
	beam.Init()
	if opts.InputSubscription != "" || s.stateDir != "" {
		s.AtEnd = "" // a streaming run keeps its waiting keys waiting (or drains them into --state_dir)
		return runStreaming(e, runnerName(), s)
	}
	res, wall, err := runWithProgress(e, runnerName(), opts)
	if err != nil {
		e.errorf("pipeline failed: %v", err)
		dropOutputs(e, opts.OutputDir, err)
		return 1
	}
	fmt.Fprintf(e.stdout, "done in %s on %s; outputs in %s\n", wall.Round(time.Millisecond), runnerName(), opts.OutputDir)
	runreport.Counters(e.stdout, res)
	runreport.Distributions(e.stdout, res)
	if why := runreport.NothingSucceeded(res, opts); why != "" {
		e.errorf("%s", why)
		return 1
	}
	return 0
}

// finish completes the settings whose flags passed their checks: the model's fallbacks and
// its options' own check, the agent's configuration, the result verification.
func (s *runSettings) finish() error {
	var err error
	if s.Model.Fallback, err = fallbacks(s.fallback, s.fallbackFile); err != nil {
		return err
	}
	if err := s.Model.Check(); err != nil {
		// The error never repeats the flag's value: it may be a key pasted by mistake.
		return fmt.Errorf("--model/--api_key/--model_fallback: %w", err)
	}
	if s.config != "" {
		if s.Config, err = records.ReadCapped(s.config, maxConfigBytes); err != nil {
			return err
		}
	}
	if err := s.finishShadow(); err != nil {
		return err
	}
	return resultsMode(&s.Options.Options)
}

// runWithProgress runs the pipeline, reporting elapsed time on stderr while it runs. The
// runner's own informational logging is kept off the terminal unless --verbose_runner is set.
func runWithProgress(e *env, runner string, opts pipeline.Options) (*pipeline.Result, time.Duration, error) {
	level := slog.LevelWarn
	if verboseRunner() {
		level = slog.LevelInfo
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})))
	// A loopback worker that ran in this process left Beam logging to its (gone) runner.
	beamlog.SetLogger(&beamlog.Structural{})
	start := time.Now()
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		runstatus.Lines(e.stderr, runner, start, done, runstatus.Every)
	}()
	// Ctrl-C or SIGTERM cancels the job (on a job service, through the Job API) and waits
	// for it to stop.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := pipeline.Run(ctx, runner, opts)
	close(done)
	<-stopped
	return res, time.Since(start), err
}

func runDemo(e *env, args []string) int {
	fs := newFlags(e, "demo", "demo [--output_dir DIR] [--live [--console ADDR]]")
	out := fs.String("output_dir", "", "directory for inputs and outputs (default: a new temporary directory)")
	live := defineLiveFlags(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if code, ok := checkFlags(e, noArgs(fs)); !ok {
		return code
	}
	if demo.Agent == "" {
		e.errorf("this binary registers no demo (cli.RegisterDemo)")
		return 2
	}
	dir := *out
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "beamagents-demo-"); err != nil {
			e.errorf("%v", err)
			return 1
		}
	}
	if *live.on {
		beam.Init()
		return runLiveDemo(e, dir, *live.console, *live.timeout)
	}
	opts, kr, err := prepareDemo(dir)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "beamagents demo: agent %q over %s, on Prism\n", demo.Agent, opts.Input)
	beam.Init()
	res, wall, err := runWithProgress(e, "prism", opts)
	if err != nil {
		e.errorf("pipeline failed: %v", err)
		return 1
	}
	if err := runreport.Demo(e.stdout, res, opts.OutputDir, kr, wall); err != nil {
		e.errorf("%v", err)
		return 1
	}
	return 0
}

// prepareDemo writes a fresh signing keyring and the example's envelopes, their results and
// approvals signed with it, under dir.
func prepareDemo(dir string) (pipeline.Options, *intent.Keyring, error) {
	in := filepath.Join(dir, "input", "envelopes.jsonl")
	if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
		return pipeline.Options{}, nil, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	ringPath := filepath.Join(dir, "keyring.json")
	doc := fmt.Sprintf(`{"active":"demo","keys":[{"id":"demo","secret":%q}]}`, base64.StdEncoding.EncodeToString(secret))
	if err := os.WriteFile(ringPath, []byte(doc), 0o600); err != nil {
		return pipeline.Options{}, nil, err
	}
	kr, err := intent.LoadKeyring("file:" + ringPath)
	if err != nil {
		return pipeline.Options{}, nil, err
	}
	// The demo's recorded results and approvals are signed with its keyring, as an effector
	// would sign them: the run verifies them with --verify_results require.
	envelopes, err := signDemoAnswers(context.Background(), demo.Agent, demo.Envelopes, kr)
	if err != nil {
		return pipeline.Options{}, nil, err
	}
	if err := os.WriteFile(in, envelopes, 0o644); err != nil {
		return pipeline.Options{}, nil, err
	}
	require := intent.ModeRequire
	return pipeline.Options{
		Options: transforms.Options{Agent: demo.Agent, Keyring: "file:" + ringPath, VerifyResults: &require},
		Input:   in, OutputDir: filepath.Join(dir, "output"),
	}, kr, nil
}
