package devloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/pstest"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/consoleserve"
	"github.com/beamagents/beamagents/internal/effectorrun"
	"github.com/beamagents/beamagents/internal/envelopes"
	"github.com/beamagents/beamagents/internal/runstate"
	"github.com/beamagents/beamagents/ltm"
	"github.com/beamagents/beamagents/ltm/backend"
	"github.com/beamagents/beamagents/pipeline"
	bapubsub "github.com/beamagents/beamagents/pubsub"
)

// ErrFailed says the loop ended with failures, each reported through Config.Errorf as it
// happened (while stopping, the stop goes on past them).
var ErrFailed = errors.New("devloop: the run ended with failures")

// Config is one run of the loop.
type Config struct {
	// Options is the agent's run: the agent, its configuration, its model, result
	// verification and memory store. Its inputs and outputs are replaced by the loop's own.
	Options pipeline.Options
	// Keyring is Options.Keyring loaded: the effector verifies intents and signs decisions
	// with it, and the loop signs the signals it takes.
	Keyring *intent.Keyring
	// StateDir keeps every key's state, the effector's records and the console's store.
	StateDir string
	// Listen is the console's address (loopback); Follow, when set, a JSON Lines file of
	// events read as it grows.
	Listen, Follow string
	// User and Password are the console pages' basic-auth credentials; the JSON API takes a
	// bearer token made at each start (server.json).
	User, Password string
	// Events are published at the start. With Until set the loop ends once every entity of
	// Until has a final reply or a dead letter (demo --live), else when ctx ends.
	Events []*pb.AgentEnvelope
	Until  map[string]bool
	// Ready, when set, is called with the console's URL and credentials once it serves.
	Ready func(url, user, password string)
	// Banner is the first line printed (default: dev's).
	Banner string
	// Stdout takes the loop's lines (activations, replies, dead letters, counters), Stderr
	// its progress notes, Errorf its failures.
	Stdout, Stderr io.Writer
	Errorf         func(format string, args ...any)
}

// loop is one running Serve: what its steps share.
type loop struct {
	c      Config
	srv    *pstest.Server
	t      topics
	client *pubsub.Client
	eff    *effector.Effector
	in     *ingest
}

// Serve runs the whole loop in this process until ctx ends (or Config.Until is met), then
// stops it keeping every key's state (see the package doc). An error returned before the
// loop ran is not reported; a *runstate.RefusedError says the options cannot keep state.
func Serve(ctx context.Context, c Config) error {
	l := &loop{c: c, srv: pstest.NewServer()}
	defer l.srv.Close()
	defer useEmulator(l.srv.Addr)()
	var err error
	if l.t, err = newTopics(ctx, l.srv); err != nil {
		return err
	}
	st, err := l.openEffector()
	if err != nil {
		return err
	}
	defer st.Close()
	if l.client, err = pubsub.NewClient(ctx, "beamagents-demo"); err != nil {
		return err
	}
	defer l.client.Close()

	// The keys' state: restored from the last drain, recorded at this one.
	opts := c.Options
	opts.Input, opts.OutputDir = "", ""
	opts.InputSubscription, opts.IntentsTopic, opts.FinalsTopic, opts.ErrorsTopic, opts.TracesTopic = l.t.eventsSub, l.t.intents, l.t.finals, l.t.errors, l.t.traces
	sd, err := runstate.Begin(filepath.Join(c.StateDir, "keys"), "prism", &opts, c.Stderr)
	if err != nil {
		return err
	}
	defer sd.Close()

	l.in = &ingest{client: l.client, topic: l.t.events, keyring: c.Keyring}
	defer l.in.stop()
	cstore, err := console.Open(filepath.Join(c.StateDir, "console.db"))
	if err != nil {
		return err
	}
	defer cstore.Close()
	// The console's pages read the run's long-term memory store on a handle of their own.
	var memory ltm.Store
	if ref := c.Options.MemoryStore; ref != "" {
		if memory, err = backend.OpenRef(ctx, ref); err != nil {
			return fmt.Errorf("--memory_store: %w", err)
		}
		defer memory.Close()
	}
	// The console's requests and subscribers end (consoleCtx) before its store closes.
	consoleCtx, stopConsole := context.WithCancel(ctx)
	defer stopConsole()
	hs, url, err := l.serveConsole(consoleCtx, cstore, memory)
	if err != nil {
		return err
	}
	defer os.Remove(filepath.Join(c.StateDir, ServerFile))

	run := bapubsub.NewRun()
	defer run.Close()
	opts.PubSub.Run = run.ID()
	pipeDone := make(chan error, 1)
	go func() {
		_, err := pipeline.Run(context.WithoutCancel(ctx), "prism", opts)
		pipeDone <- err
	}()
	// The intents the restored keys wait on go to the effector again: it runs a tool once
	// (a recorded one answers with its recorded result) and lists an approval again. Those
	// whose answer is among the restored envelopes are answered already.
	if n, err := republishPending(ctx, l.client, l.t.intents, opts.Restore, opts.Pending); err != nil {
		return fmt.Errorf("re-sending the restored keys' pending intents: %v", err)
	} else if n > 0 {
		fmt.Fprintf(c.Stderr, "%d pending intents of restored keys sent to the effector again\n", n)
	}
	effCtx, stopEff := context.WithCancel(context.WithoutCancel(ctx))
	defer stopEff()
	effDone := make(chan error, 1)
	go func() {
		effDone <- l.eff.Serve(effCtx, l.client, effector.ServiceOptions{Subscription: l.t.intentsSub, ResultsTopic: l.t.events})
	}()
	l.printBanner(url, opts.Agent)

	w := &watch{out: c.Stdout, errorf: c.Errorf, client: l.client, subs: []string{l.t.tracesSub, l.t.finalsSub, l.t.errorsSub}, traces: l.t.tracesSub,
		finals: l.t.finalsSub, attempts: map[string]*attempt{}, answered: map[string]bool{}}
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatch()
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); w.loop(watchCtx) }()

	followDone := make(chan struct{})
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	if c.Follow != "" {
		go func() {
			defer close(followDone)
			follow(followCtx, c.Errorf, l.in, c.Follow, filepath.Join(c.StateDir, "follow.json"))
		}()
	} else {
		close(followDone)
	}
	for _, env := range c.Events {
		if _, err := l.in.event(ctx, env.GetEntityKey(), env.GetExternalEvent()); err != nil {
			return err
		}
	}
	if c.Ready != nil {
		go c.Ready(url, c.User, c.Password)
	}

	ok := true
	if c.Until != nil {
		ok = w.waitAll(ctx, c.Until)
	} else {
		<-ctx.Done()
	}
	// Stop: no more events; the effector finishes what it holds; every event and result
	// already published is taken by the pipeline; then the drain records every key.
	fmt.Fprintln(c.Stderr, "\nstopping: no more events; the effector finishes, the pipeline takes what was sent, then every key's state is written")
	l.in.stop()
	stopFollow()
	<-followDone
	consoleserve.Shutdown(hs)
	stopConsole()
	stopEff()
	<-effDone
	if !waitConsumed(l.srv, l.t.events, time.Minute) {
		c.Errorf("the pipeline did not take every event within a minute: those left are lost")
		ok = false
	}
	sd.Freeze()
	run.Drain()
	ok = l.drain(pipeDone, sd, run) && ok
	stopWatch()
	<-watchDone
	w.flush(context.Background())
	fmt.Fprintln(c.Stdout, "effector counters:")
	effectorrun.PrintCounters(c.Stdout, l.eff.Metrics().Snapshot())
	if !ok {
		return ErrFailed
	}
	return nil
}

// useEmulator points this process's Pub/Sub clients (the pipeline's too: Prism runs its
// workers here) at the emulator at addr; the function it returns undoes that.
func useEmulator(addr string) func() {
	prev, had := os.LookupEnv("PUBSUB_EMULATOR_HOST")
	os.Setenv("PUBSUB_EMULATOR_HOST", addr)
	return func() {
		if had {
			os.Setenv("PUBSUB_EMULATOR_HOST", prev)
		} else {
			os.Unsetenv("PUBSUB_EMULATOR_HOST")
		}
	}
}

// openEffector opens the effector's store in the state directory and the effector running
// the agent's registered tools.
func (l *loop) openEffector() (store.Store, error) {
	bindings, err := effector.AgentBindings(l.c.Options.Agent)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenBolt(filepath.Join(l.c.StateDir, "effector.db"))
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("--state_dir %s is in use by another beamagents dev (its effector.db is locked): stop it, or give this one its own --state_dir", l.c.StateDir)
	}
	if err != nil {
		return nil, err
	}
	verify := intent.ModeRequire
	if l.c.Options.VerifyResults != nil {
		verify = *l.c.Options.VerifyResults
	}
	if l.eff, err = effector.New(effector.Options{Keyring: l.c.Keyring, Verify: verify, Store: st, Tools: bindings}); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// serveConsole serves the console (pages, approvals, JSON API) with its store cstore over
// the loop's topics until ctx ends, and writes server.json; its entity pages list the keys'
// long-term memory from memory (nil: none). It returns the server and its
// URL.
func (l *loop) serveConsole(ctx context.Context, cstore *console.Store, memory ltm.Store) (*http.Server, string, error) {
	token := RandomHex(24)
	who := "dev"
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = u.Username
	}
	h, err := console.New(console.Options{
		Store: cstore, Approvals: l.eff.Approvals(), Identity: console.Identity{BasicAuth: map[string]string{l.c.User: l.c.Password}},
		Tokens: map[string]string{token: who}, Ingest: l.in.event, Signal: l.in.signal,
		Redrive: console.Redrive{Publish: envelopes.Publisher(l.client, l.t.events)}, Logger: slog.Default(), Memory: memory,
	})
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", l.c.Listen)
	if err != nil {
		return nil, "", fmt.Errorf("--listen: %v", err)
	}
	for _, sub := range l.t.consoleSubs {
		s := &console.Subscriber{Store: cstore, Client: l.client, Subscription: sub}
		go s.Run(ctx)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go hs.Serve(ln)
	url := "http://" + ln.Addr().String() + "/"
	if err := writeServer(l.c.StateDir, Server{URL: url, Token: token}); err != nil {
		return nil, "", err
	}
	return hs, url, nil
}

func (l *loop) printBanner(url, agentName string) {
	banner := l.c.Banner
	if banner == "" {
		banner = fmt.Sprintf("beamagents dev: agent %q streaming on Prism over an in-process Pub/Sub emulator; state in %s", agentName, l.c.StateDir)
	}
	fmt.Fprintln(l.c.Stdout, banner)
	fmt.Fprintf(l.c.Stdout, "console: %s (approvals: %sapprovals, user %s, password %s); JSON API token in %s\n",
		url, url, l.c.User, l.c.Password, filepath.Join(l.c.StateDir, ServerFile))
	fmt.Fprintf(l.c.Stdout, "send events: beamagents send --state_dir %s --key KEY TEXT; Ctrl-C stops, keeping every key's state\n", l.c.StateDir)
}

// drain waits for the drained pipeline and commits its keys' state; it reports whether both
// succeeded.
func (l *loop) drain(pipeDone <-chan error, sd *runstate.Run, run *bapubsub.Run) bool {
	select {
	case err := <-pipeDone:
		if err != nil {
			l.c.Errorf("pipeline: %v", err)
			return false
		}
		if err := sd.Commit(run.Status().Watermark, l.c.Stdout); err != nil {
			l.c.Errorf("%v", err)
			return false
		}
		return true
	case <-time.After(2 * time.Minute):
		l.c.Errorf("the pipeline did not drain within 2 minutes: the state of this run is lost")
		return false
	}
}
