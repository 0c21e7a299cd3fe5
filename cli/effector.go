package cli

import (
	"context"
	"errors"
	"flag"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/consoleserve"
	"github.com/beamagents/beamagents/internal/effectorrun"
	"github.com/beamagents/beamagents/internal/outfiles"
)

func init() {
	register(&command{name: "effector", summary: "execute signed tool intents once and write their results (files or Pub/Sub)", run: runEffector})
}

// effectorContext is the life of a service run: until SIGINT or SIGTERM. Tests replace it.
var effectorContext = func() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

type effectorFlags struct {
	input, outputDir, subscription, resultsTopic *string
	keyring, verify, dedup, console, agents      *string
	expiry                                       *string
	approverHeader, approverUsers, allowedHosts  *string
	apiTokens                                    *string
	lease, toolTimeout                           *time.Duration
	workers                                      *int
	replace                                      *bool
	fs                                           *flag.FlagSet
	mode                                         intent.Mode     // --verify, parsed by its check
	expiryPolicy                                 effector.Expiry // --expiry, parsed by its check
}

func defineEffectorFlags(e *env) (*effectorFlags, func([]string) (int, bool)) {
	fs := newFlags(e, "effector", "effector (--input GLOB --output_dir DIR | --input_subscription SUB --results_topic TOPIC) [flags]")
	f := &effectorFlags{
		input:          fs.String("input", "", "intent files: a glob of JSON Lines (*.jsonl) or length-delimited binary files, as `run` writes them"),
		outputDir:      fs.String("output_dir", "", "directory for results.binpb and results.jsonl"),
		subscription:   fs.String("input_subscription", "", "Pub/Sub subscription delivering intents (projects/P/subscriptions/S)"),
		resultsTopic:   fs.String("results_topic", "", "Pub/Sub topic for result and approval envelopes (projects/P/topics/T)"),
		keyring:        fs.String("keyring", "", "keyring reference for verifying intents: env:VAR or file:PATH"),
		verify:         fs.String("verify", "require", "signature verification: off, permissive or require"),
		dedup:          fs.String("dedup", "", "dedup store: bbolt:PATH or redis:HOST:PORT (default: a bbolt file under the user cache directory)"),
		console:        fs.String("console", "", "serve the approval console on this address (for example 127.0.0.1:8080)"),
		agents:         fs.String("agents", "", "comma-separated agents whose tools to run (default: every agent with registered tools)"),
		approverHeader: fs.String("approver_header", "", "console: request header carrying the approver's identity (set by an authenticating proxy)"),
		approverUsers:  fs.String("approver_users", "", "console: basic-auth users, env:VAR or file:PATH holding user:password lines"),
		apiTokens:      fs.String("api_tokens", "", "console: bearer tokens of programs on the JSON API (/api/approvals), env:VAR or file:PATH holding user:token lines"),
		allowedHosts:   fs.String("allowed_hosts", "", "console: comma-separated host names (with or without a port) it is reached by besides IP addresses and localhost, such as a proxy's"),
		lease:          fs.Duration("lease", 30*time.Second, "how long a claim holds before another effector may take it over"),
		toolTimeout:    fs.Duration("tool_timeout", 30*time.Second, "bound of one tool call"),
		workers:        fs.Int("workers", 64, "intents handled at once"),
		expiry:         fs.String("expiry", "clock", expiryUsage),
		replace:        fs.Bool("replace", false, "replace the files an earlier run left in --output_dir (without it, effector refuses a folder holding them)"),
		fs:             fs,
	}
	return f, func(args []string) (int, bool) { return parse(fs, args) }
}

const expiryUsage = "how an intent's deadline is judged: clock (its expires_at_ms against this effector's clock; for inputs whose event time is the wall clock) " +
	"or emission:MAXLAG (the deadline its attempt was given in event time, from its emission: the intents file's modification time, the message's publish time; " +
	"for a backfill, whose event times are up to MAXLAG behind the clock, for example emission:24h)"

func runEffector(e *env, args []string) int {
	f, parseArgs := defineEffectorFlags(e)
	if code, ok := parseArgs(args); !ok {
		return code
	}
	files := *f.input != "" || *f.outputDir != ""
	service := *f.subscription != "" || *f.resultsTopic != ""
	if files == service || (files && (*f.input == "" || *f.outputDir == "")) || (service && (*f.subscription == "" || *f.resultsTopic == "")) {
		e.errorf("usage: beamagents effector (--input GLOB --output_dir DIR | --input_subscription SUB --results_topic TOPIC) [--keyring REF] [--verify off|permissive|require] [--dedup bbolt:PATH|redis:ADDR] [--console ADDR]")
		return 2
	}
	if code, ok := checkFlags(e, effectorChecks(f, files)...); !ok {
		return code
	}
	eff, st, err := effectorrun.Build(effectorrun.Settings{Keyring: *f.keyring, Verify: f.mode, Agents: *f.agents, Dedup: *f.dedup,
		Lease: *f.lease, ToolTimeout: *f.toolTimeout, Expiry: f.expiryPolicy})
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	defer st.Close()
	ctx, stop := effectorContext()
	defer stop()
	var srv *http.Server
	if *f.console != "" {
		c := effectorrun.Console{Addr: *f.console, ApproverHeader: *f.approverHeader, ApproverUsers: *f.approverUsers, APITokens: *f.apiTokens, AllowedHosts: *f.allowedHosts}
		if srv, err = effectorrun.ServeConsole(eff, c, e.stdout); err != nil {
			e.errorf("%v", err)
			return 2
		}
		// Shutdown, not Close: the decision that completes the run is still being answered.
		defer consoleserve.Shutdown(srv)
	}
	if service {
		err = effectorrun.Serve(ctx, eff, effectorrun.Service{Subscription: *f.subscription, ResultsTopic: *f.resultsTopic, Workers: *f.workers}, e.stdout)
	} else {
		err = runEffectorFiles(ctx, e, eff, f, srv != nil)
	}
	var open *effectorrun.UndecidedError
	if err != nil && !errors.As(err, &open) {
		e.errorf("%v", err)
		return 1
	}
	effectorrun.PrintCounters(e.stdout, eff.Metrics().Snapshot())
	if open != nil {
		e.errorf("%v", open)
		return 1
	}
	return 0
}

// runEffectorFiles is a files run (effectorrun.RunFiles); one that fails removes what it
// wrote, but when intents were held back for their tools or approvals are left undecided.
func runEffectorFiles(ctx context.Context, e *env, eff *effector.Effector, f *effectorFlags, console bool) error {
	err := effectorrun.RunFiles(ctx, eff, effectorrun.Files{Input: *f.input, OutputDir: *f.outputDir, Workers: *f.workers, Console: console}, e.stdout, e.errorf)
	var open *effectorrun.UndecidedError
	if err != nil && !errors.Is(err, effector.ErrToolUnregistered) && !errors.As(err, &open) {
		outfiles.Remove(context.Background(), *f.outputDir, effectorOutputs())
	}
	return err
}

// effectorOutputs are the files a files run writes under --output_dir.
func effectorOutputs() []string { return outfiles.Globs(effector.ResultsName, effector.MalformedName) }

// effectorChecks are effector's launch-time checks of its flags (see checkFlags).
func effectorChecks(f *effectorFlags, files bool) []check {
	ctx := context.Background()
	cs := []check{
		noArgs(f.fs),
		verification("verify", *f.verify, func(m intent.Mode) { f.mode = m }),
		func() error {
			x, err := effector.ParseExpiry(*f.expiry)
			if err != nil {
				var ee *effector.Error
				errors.As(err, &ee)
				return refuseFlag("expiry", "%s", ee.Detail)
			}
			f.expiryPolicy = x
			return nil
		},
		atLeast("workers", *f.workers, 1),
		atMost("workers", *f.workers, 100000),
		positive("lease", *f.lease),
		positive("tool_timeout", *f.toolTimeout),
		keyringRef("keyring", *f.keyring, true),
		when(*f.dedup != "", func() error {
			kind, arg, _ := strings.Cut(*f.dedup, ":")
			if arg == "" || kind != "bbolt" && kind != "redis" {
				return refuseFlag("dedup", "%q is not bbolt:PATH or redis:HOST:PORT", *f.dedup)
			}
			return nil
		}),
		when(*f.approverUsers != "", func() error {
			if !localRef(*f.approverUsers) || strings.ContainsAny(*f.approverUsers, "\n\r") {
				return refuseFlag("approver_users", "the value is not env:VAR or file:PATH; did you paste the users themselves?")
			}
			return nil
		}),
		when(*f.apiTokens != "", func() error {
			switch {
			case !localRef(*f.apiTokens) || strings.ContainsAny(*f.apiTokens, "\n\r"):
				return refuseFlag("api_tokens", "the value is not env:VAR or file:PATH; did you paste the tokens themselves?")
			case *f.console == "":
				return refuseFlag("api_tokens", "needs --console: the JSON API is served by the approval console")
			}
			return nil
		}),
		when(*f.console != "", func() error {
			if _, _, err := net.SplitHostPort(*f.console); err != nil {
				return refuseFlag("console", "not HOST:PORT (for example 127.0.0.1:8080)")
			}
			return nil
		}),
	}
	for _, name := range agentList(*f.agents) {
		cs = append(cs, registered("agents", name, "agent with tools", tool.AgentsWithTools()))
	}
	if files {
		cs = append(cs, inputGlob(ctx, "input", *f.input, intentType),
			outputDir(ctx, "output_dir", *f.outputDir, *f.replace, effectorOutputs(), [2]string{"input", *f.input}))
	}
	return cs
}

var intentType = (&pb.ToolIntent{}).ProtoReflect().Descriptor().FullName()

func agentList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
