package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/records"
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
	eff, st, err := buildEffector(f)
	if err != nil {
		e.errorf("%v", err)
		return 2
	}
	defer st.Close()
	ctx, stop := effectorContext()
	defer stop()
	var srv *http.Server
	if *f.console != "" {
		if srv, err = serveConsole(e, eff, f); err != nil {
			e.errorf("%v", err)
			return 2
		}
		// Shutdown, not Close: the decision that completes the run is still being answered.
		defer shutdownConsole(srv)
	}
	if service {
		err = serveEffector(ctx, e, eff, f)
	} else {
		err = runEffectorFiles(ctx, e, eff, f, srv != nil)
	}
	var open *undecided
	if err != nil && !errors.As(err, &open) {
		e.errorf("%v", err)
		return 1
	}
	printEffectorCounters(e.stdout, eff.Metrics().Snapshot())
	if open != nil {
		e.errorf("%v", open)
		return 1
	}
	return 0
}

// undecided ends a files run that wrote its outputs but holds approvals nobody can decide
// (no console): the run is not a success, and the person running it is told how to decide.
type undecided struct {
	n     int
	input string
}

func (u *undecided) Error() string {
	return fmt.Sprintf("%d approval(s) nobody can decide here: serve them with --console, or decide each with "+
		"`beamagents approve --intents %s --intent ID --approver WHO --keyring REF` and give the decisions to the next run", u.n, u.input)
}

func buildEffector(f *effectorFlags) (*effector.Effector, store.Store, error) {
	var kr *intent.Keyring
	var err error
	switch {
	case *f.keyring != "":
		if kr, err = intent.LoadKeyring(*f.keyring); err != nil {
			return nil, nil, err
		}
	case f.mode != intent.ModeOff:
		return nil, nil, fmt.Errorf("--verify %s needs --keyring (or --verify off)", f.mode)
	}
	names := tool.AgentsWithTools()
	if *f.agents != "" {
		names = strings.Split(*f.agents, ",")
	}
	bindings, err := effector.AgentBindings(names...)
	if err != nil {
		return nil, nil, err
	}
	ref := *f.dedup
	if ref == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, nil, fmt.Errorf("no user cache directory for the default dedup store (set --dedup): %v", err)
		}
		ref = "bbolt:" + filepath.Join(dir, "beamagents", "effector.db")
	}
	st, err := store.Open(ref)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, nil, fmt.Errorf("--dedup: the store %s is locked by another process (another effector on the same file?); stop it, or give this one its own --dedup", ref)
	}
	if err != nil {
		return nil, nil, err
	}
	eff, err := effector.New(effector.Options{
		Keyring: kr, Verify: f.mode, Store: st, Tools: bindings, Lease: *f.lease, ToolTimeout: *f.toolTimeout, Expiry: f.expiryPolicy,
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return eff, st, nil
}

func serveConsole(e *env, eff *effector.Effector, f *effectorFlags) (*http.Server, error) {
	id, err := consoleIdentity(*f.approverHeader, *f.approverUsers)
	if err != nil {
		return nil, err
	}
	var tokens map[string]string // token → user
	if *f.apiTokens != "" {
		byUser, err := loadPairs("api_tokens", *f.apiTokens, "user:token")
		if err != nil {
			return nil, err
		}
		tokens = map[string]string{}
		for user, token := range byUser {
			tokens[token] = user
		}
	}
	h, err := console.New(console.Options{Approvals: eff.Approvals(), Identity: id, ReadNeedsIdentity: true, Hosts: hostList(*f.allowedHosts), Tokens: tokens})
	if err != nil {
		return nil, fmt.Errorf("--console needs --approver_header or --approver_users: %w", err)
	}
	l, err := net.Listen("tcp", *f.console)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	fmt.Fprintf(e.stdout, "approval console on http://%s/approvals\n", l.Addr())
	return srv, nil
}

// loadUsers reads user:password lines from env:VAR or file:PATH.
func loadUsers(ref string) (map[string]string, error) {
	return loadPairs("approver_users", ref, "user:password")
}

// loadPairs reads the lines of form ("user:SECRET") from reference ref of flag name:
// user → secret.
func loadPairs(name, ref, form string) (map[string]string, error) {
	kind, arg, _ := strings.Cut(ref, ":")
	var data string
	switch kind {
	case "env":
		data = os.Getenv(arg)
	case "file":
		b, err := records.ReadCapped(arg, maxConfigBytes)
		if err != nil {
			return nil, err
		}
		data = string(b)
	default:
		return nil, fmt.Errorf("--%s: the value is not env:VAR or file:PATH; did you paste the secrets themselves?", name)
	}
	users := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, p, ok := strings.Cut(line, ":")
		if !ok || u == "" || p == "" {
			return nil, fmt.Errorf("--%s: a line is not %s", name, form)
		}
		users[u] = p
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("--%s: the reference holds no users", name)
	}
	return users, nil
}

// runEffectorFiles handles every intent of the input once; with a console it then waits
// until every approval is decided or expired (or the process is interrupted), and writes the
// results with the decisions.
func runEffectorFiles(ctx context.Context, e *env, eff *effector.Effector, f *effectorFlags, console bool) (err error) {
	recs, err := effector.ReadIntents(*f.input)
	if err != nil {
		return err
	}
	defer func() {
		var open *undecided
		if err != nil && !errors.Is(err, effector.ErrToolUnregistered) && !errors.As(err, &open) {
			removeOutputs(context.Background(), *f.outputDir, effectorOutputs())
		}
	}()
	var mu sync.Mutex
	var decisions []*pb.AgentEnvelope
	eff.Approvals().SetSink(func(_ context.Context, env *pb.AgentEnvelope) error {
		mu.Lock()
		decisions = append(decisions, env)
		mu.Unlock()
		return nil
	})
	results, malformed, err := eff.HandleAll(ctx, recs, *f.workers)
	if err != nil {
		return err
	}
	held := 0
	for _, m := range malformed {
		if errors.Is(m.Err, effector.ErrToolUnregistered) {
			held++
		}
		e.errorf("%v", m.Err)
	}
	if console {
		shown := -1
		for eff.Approvals().Open() > 0 && ctx.Err() == nil {
			// Said when the count changes, not on every tick.
			if n := eff.Approvals().Open(); n != shown {
				fmt.Fprintf(e.stdout, "waiting for %d approval decision(s) in the console\n", n)
				shown = n
			}
			select {
			case <-eff.Approvals().Changed():
			case <-ctx.Done():
			case <-time.After(time.Second): // deadlines pass without an event
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := eff.Approvals().Open(); n > 0 && console {
		defer func() {
			if err == nil {
				err = fmt.Errorf("stopped with %d approval decision(s) pending: their intents have no result yet", n)
			}
		}()
	}
	if err := effector.WriteResults(*f.outputDir, append(results, decisions...), malformed); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%d intents, %d results and %d decisions in %s/%s.{binpb,jsonl}\n", len(recs), len(results), len(decisions), *f.outputDir, effector.ResultsName)
	if held > 0 {
		return fmt.Errorf("%d intents held back: no registered agent provides their tools (agents with tools in this binary: %s; --agents chooses among them); nothing was recorded for them, and they run once their tools are registered",
			held, strings.Join(tool.AgentsWithTools(), ", "))
	}
	if n := eff.Approvals().Open(); n > 0 && !console {
		return &undecided{n: n, input: *f.input}
	}
	return nil
}

func serveEffector(ctx context.Context, e *env, eff *effector.Effector, f *effectorFlags) error {
	sub, err := wire.ParseSubscription(*f.subscription)
	if err != nil {
		return err
	}
	client, err := pubsub.NewClient(ctx, sub.Project)
	if err != nil {
		return err
	}
	defer client.Close()
	fmt.Fprintf(e.stdout, "effector serving %s → %s\n", *f.subscription, *f.resultsTopic)
	err = eff.Serve(ctx, client, effector.ServiceOptions{Subscription: *f.subscription, ResultsTopic: *f.resultsTopic, Workers: *f.workers})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

func printEffectorCounters(w io.Writer, m map[string]int64) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-28s %d\n", n, m[n])
	}
}

// shutdownConsole stops the approval console once its requests in flight are answered, or
// after five seconds.
func shutdownConsole(console *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if console.Shutdown(ctx) != nil {
		console.Close()
	}
}

// effectorOutputs are the files a files run writes under --output_dir.
func effectorOutputs() []string { return outputGlobs(effector.ResultsName, effector.MalformedName) }

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
