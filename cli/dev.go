package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	bolterrors "go.etcd.io/bbolt/errors"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pipeline"
	bapubsub "github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/pubsub/wire"
	"github.com/beamagents/beamagents/tracing"
)

func init() {
	register(&command{name: "dev", summary: "develop an agent locally: streaming on Prism, its tools, the console and approvals, state kept across restarts", run: runDev})
}

// devRunFlags are the flags of run's table that dev takes too (declared once, in runFlags):
// the agent, its configuration, the keyring and result verification, the long-term memory
// store, and the whole model group.
func devRunFlags() []runFlag {
	names := map[string]bool{"agent": true, "agent_config": true, "keyring": true, "verify_results": true, "memory_store": true}
	var out []runFlag
	model := false
	for _, f := range runFlags {
		if f.heading != "" {
			model = f.heading == "The model"
			continue
		}
		if f.define != nil && (model || names[f.name]) {
			out = append(out, f)
		}
	}
	return out
}

// devUsage is dev's usage line.
const devUsage = "dev --agent NAME [--state_dir DIR] [--listen ADDR] [--follow FILE] [--model openai --base_url URL --api_key REF ...] [--keyring REF] [--memory_store REF]"

// devSettings are what a dev run needs: the pipeline's options and dev's own.
type devSettings struct {
	opts     pipeline.Options
	stateDir string
	listen   string
	follow   string
	// page credentials (basic auth) for the console's pages; the JSON API takes the token.
	user, password string
	// demo --live: events published at the start, a condition that ends the run once every
	// entity has a final reply or a dead letter, and a hook for tests.
	events  []*pb.AgentEnvelope
	until   map[string]bool
	timeout time.Duration
	ready   func(url, user, password string)
	banner  string
}

func runDev(e *env, args []string) int {
	fs := newFlags(e, "dev", devUsage)
	flags := devRunFlags()
	for _, f := range flags {
		f.define(fs)
	}
	stateDir := fs.String("state_dir", "", "directory keeping every key's state, the effector's records and the console's store across restarts (default: beamagents/dev/AGENT under the user cache directory)")
	listen := fs.String("listen", "127.0.0.1:8089", "the console's address (loopback): pages, approvals, and the JSON API that takes events and decisions")
	follow := fs.String("follow", "", "a JSON Lines file of events ({\"key\":…,\"body\":…} per line) read as it grows; where it was read to is kept in the state directory")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	s := &runSettings{}
	for _, f := range flags {
		f.apply(s)
	}
	checks := []check{noArgs(fs), required("agent", s.Agent, "a registered agent (beamagents help lists the commands; run --help the flags)")}
	for _, f := range flags {
		checks = append(checks, f.check(s))
	}
	checks = append(checks, when(!loopback(*listen), func() error {
		return refuseFlag("listen", "dev serves on loopback only (for example 127.0.0.1:8089): its console has no sign-in beyond a generated password")
	}), when(*follow != "", func() error {
		if st, err := os.Stat(*follow); err == nil && st.IsDir() {
			return refuseFlag("follow", "%s is a folder, not a file", *follow)
		}
		return nil
	}))
	if code, ok := checkFlags(e, checks...); !ok {
		return code
	}
	dir := *stateDir
	if dir == "" {
		var err error
		if dir, err = defaultDevStateDir(s.Agent); err != nil {
			e.errorf("%v", err)
			return 2
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		e.errorf("--state_dir: %v", unwrapPath(err))
		return 2
	}
	if err := devDefaults(s, dir); err != nil {
		e.errorf("%v", err)
		return 1
	}
	if err := s.finish(); err != nil {
		e.errorf("%v", err)
		return 2
	}
	if modelless(s.Options) {
		e.errorf(noModelHelp, s.Agent, s.Model.Provider)
		return 2
	}
	if code := checkSecretRefs(e, "prism", s.Options); code != 0 {
		return code
	}
	beam.Init()
	return serveDev(e, &devSettings{opts: s.Options, stateDir: dir, listen: *listen, follow: *follow, user: "dev", password: randomHex(8)})
}

// defaultDevStateDir is dev's state directory for agent under the user cache directory.
func defaultDevStateDir(agentName string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for dev's state (set --state_dir): %v", err)
	}
	return filepath.Join(cache, "beamagents", "dev", agentName), nil
}

// devKeyring is the keyring dev signs and verifies with when --keyring is not given: one
// made at the first start in the state directory (keyring.json, 0600) and kept, so the
// intents of suspended keys still verify after a restart.
func devKeyring(dir string) (string, error) {
	path := filepath.Join(dir, "keyring.json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return "", err
		}
		doc := fmt.Sprintf(`{"active":"dev","keys":[{"id":"dev","secret":%q}]}`, base64.StdEncoding.EncodeToString(secret))
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, path); err != nil {
			return "", err
		}
	}
	return "file:" + path, nil
}

// devDefaults gives a dev run without --keyring or --memory_store its own, in the state
// directory dir.
func devDefaults(s *runSettings, dir string) error {
	if s.Keyring == "" {
		ref, err := devKeyring(dir)
		if err != nil {
			return err
		}
		s.Keyring = ref
	}
	if s.MemoryStore == "" {
		s.MemoryStore = devMemoryStore(dir)
	}
	return nil
}

// devMemoryStore is the long-term memory store dev uses when --memory_store is not given: a
// SQLite file in the state directory (memory.db), kept across restarts like the keys' state.
func devMemoryStore(dir string) string {
	return "sqlite:" + filepath.Join(dir, "memory.db")
}

// devServer is what `send` and `approve --state_dir` read to reach a running dev: its
// console's URL and the bearer token of its JSON API (server.json in the state directory,
// 0600, removed when dev stops).
type devServer struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

const devServerFile = "server.json"

func writeDevServer(dir string, s devServer) error {
	b, _ := json.Marshal(s)
	tmp := filepath.Join(dir, devServerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, devServerFile))
}

// serveDev runs the whole loop in this process until interrupted (or, for demo --live, until
// every entity of its events has a final reply or a dead letter): the Pub/Sub emulator, the
// agent streaming on Prism with its state kept in the state directory, the effector running
// the agent's registered tools, and the console with its approvals and JSON API.
func serveDev(e *env, d *devSettings) int {
	quietRunner(e)
	ctx, stop := effectorContext()
	defer stop()
	if d.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
		defer cancel()
	}
	kr, err := intent.LoadKeyring(d.opts.Keyring)
	if err != nil {
		e.errorf("--keyring: %v", redact(err, d.opts.Keyring))
		return 2
	}
	srv := pstest.NewServer()
	defer srv.Close()
	prev, had := os.LookupEnv("PUBSUB_EMULATOR_HOST")
	os.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	defer func() {
		if had {
			os.Setenv("PUBSUB_EMULATOR_HOST", prev)
		} else {
			os.Unsetenv("PUBSUB_EMULATOR_HOST")
		}
	}()
	topics, err := newLiveTopics(ctx, srv)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	bindings, err := effector.AgentBindings(d.opts.Agent)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	st, err := store.OpenBolt(filepath.Join(d.stateDir, "effector.db"))
	if errors.Is(err, bolterrors.ErrTimeout) {
		e.errorf("--state_dir %s is in use by another beamagents dev (its effector.db is locked): stop it, or give this one its own --state_dir", d.stateDir)
		return 1
	}
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer st.Close()
	verify := intent.ModeRequire
	if d.opts.VerifyResults != nil {
		verify = *d.opts.VerifyResults
	}
	eff, err := effector.New(effector.Options{Keyring: kr, Verify: verify, Store: st, Tools: bindings})
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	client, err := pubsub.NewClient(ctx, "beamagents-demo")
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer client.Close()

	// The keys' state: restored from the last drain, recorded at this one.
	opts := d.opts
	opts.Input, opts.OutputDir = "", ""
	opts.InputSubscription, opts.IntentsTopic, opts.FinalsTopic, opts.ErrorsTopic, opts.TracesTopic = topics.eventsSub, topics.intents, topics.finals, topics.errors, topics.traces
	sd, code := beginStateDir(e, "prism", filepath.Join(d.stateDir, "keys"), &opts)
	if code != 0 {
		return code
	}
	defer sd.close()

	in := &devIngest{client: client, topic: topics.events, keyring: kr}
	defer in.stop()
	token := randomHex(24)
	who := "dev"
	if u, err := user.Current(); err == nil && u.Username != "" {
		who = u.Username
	}
	cstore, err := console.Open(filepath.Join(d.stateDir, "console.db"))
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer cstore.Close()
	h, err := console.New(console.Options{
		Store: cstore, Approvals: eff.Approvals(), Identity: console.Identity{BasicAuth: map[string]string{d.user: d.password}},
		Tokens: map[string]string{token: who}, Ingest: in.ingest, Signal: in.signal,
		Redrive: console.Redrive{Publish: publishEnvelopes(client, topics.events)}, Logger: slog.Default(),
	})
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	l, err := net.Listen("tcp", d.listen)
	if err != nil {
		e.errorf("--listen: %v", err)
		return 1
	}
	consoleCtx, stopConsole := context.WithCancel(ctx)
	defer stopConsole()
	for _, sub := range topics.consoleSubs {
		s := &console.Subscriber{Store: cstore, Client: client, Subscription: sub}
		go s.Run(consoleCtx)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return consoleCtx }}
	go hs.Serve(l)
	url := "http://" + l.Addr().String() + "/"
	if err := writeDevServer(d.stateDir, devServer{URL: url, Token: token}); err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer os.Remove(filepath.Join(d.stateDir, devServerFile))

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
	if n, err := republishPending(ctx, client, topics.intents, opts.Restore, opts.Pending); err != nil {
		e.errorf("re-sending the restored keys' pending intents: %v", err)
		return 1
	} else if n > 0 {
		fmt.Fprintf(e.stderr, "%d pending intents of restored keys sent to the effector again\n", n)
	}
	effCtx, stopEff := context.WithCancel(context.WithoutCancel(ctx))
	defer stopEff()
	effDone := make(chan error, 1)
	go func() {
		effDone <- eff.Serve(effCtx, client, effector.ServiceOptions{Subscription: topics.intentsSub, ResultsTopic: topics.events})
	}()

	banner := d.banner
	if banner == "" {
		banner = fmt.Sprintf("beamagents dev: agent %q streaming on Prism over an in-process Pub/Sub emulator; state in %s", opts.Agent, d.stateDir)
	}
	fmt.Fprintln(e.stdout, banner)
	fmt.Fprintf(e.stdout, "console: %s (approvals: %sapprovals, user %s, password %s); JSON API token in %s\n",
		url, url, d.user, d.password, filepath.Join(d.stateDir, devServerFile))
	fmt.Fprintf(e.stdout, "send events: beamagents send --state_dir %s --key KEY TEXT; Ctrl-C stops, keeping every key's state\n", d.stateDir)

	w := &devWatch{e: e, client: client, subs: []string{topics.tracesSub, topics.finalsSub, topics.errorsSub}, traces: topics.tracesSub,
		finals: topics.finalsSub, attempts: map[string]*attempt{}, answered: map[string]bool{}}
	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatch()
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); w.loop(watchCtx) }()

	followDone := make(chan struct{})
	followCtx, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	if d.follow != "" {
		go func() {
			defer close(followDone)
			followFile(followCtx, e, in, d.follow, filepath.Join(d.stateDir, "follow.json"))
		}()
	} else {
		close(followDone)
	}
	for _, env := range d.events {
		if _, err := in.ingest(ctx, env.GetEntityKey(), env.GetExternalEvent()); err != nil {
			e.errorf("%v", err)
			return 1
		}
	}
	if d.ready != nil {
		go d.ready(url, d.user, d.password)
	}

	code = 0
	if d.until != nil {
		code = w.waitAll(ctx, d.until)
	} else {
		<-ctx.Done()
	}
	// Stop: no more events; the effector finishes what it holds; every event and result
	// already published is taken by the pipeline; then the drain records every key.
	fmt.Fprintln(e.stderr, "\nstopping: no more events; the effector finishes, the pipeline takes what was sent, then every key's state is written")
	in.stop()
	stopFollow()
	<-followDone
	shutdownConsole(hs)
	stopConsole()
	stopEff()
	<-effDone
	if !waitConsumed(srv, topics.events, time.Minute) {
		e.errorf("the pipeline did not take every event within a minute: those left are lost")
		code = 1
	}
	sd.freeze()
	run.Drain()
	select {
	case err := <-pipeDone:
		if err != nil {
			e.errorf("pipeline: %v", err)
			code = 1
		} else if c := sd.commit(e, run.Status().Watermark); c != 0 {
			code = c
		}
	case <-time.After(2 * time.Minute):
		e.errorf("the pipeline did not drain within 2 minutes: the state of this run is lost")
		code = 1
	}
	stopWatch()
	<-watchDone
	w.flush(context.Background())
	fmt.Fprintln(e.stdout, "effector counters:")
	printEffectorCounters(e.stdout, eff.Metrics().Snapshot())
	return code
}

// devIngest publishes events to the input topic, each with event time its arrival (the
// clock read here, at ingestion: never in an activation), strictly increasing.
type devIngest struct {
	client  *pubsub.Client
	topic   string
	keyring *intent.Keyring // signs signals
	mu      sync.Mutex
	last    int64
	closed  atomic.Bool
	pub     *pubsub.Publisher
}

func (in *devIngest) ingest(ctx context.Context, key, body []byte) (int64, error) {
	at, res, err := in.publish(ctx, key, body)
	if err != nil {
		return 0, err
	}
	return at, in.wait(ctx, key, res)
}

// signal publishes a signal like an event: sent at its event time, signed with dev's keyring.
func (in *devIngest) signal(ctx context.Context, sig *pb.AgentEnvelope_Signal) (int64, error) {
	key := sig.GetEntityKey()
	at, res, err := in.publishEnvelope(ctx, key, func(at int64) *pb.AgentEnvelope {
		sig.SentAtMs = at
		// Signing with the active key of a valid keyring cannot fail.
		_ = intent.SignSignal(sig, in.keyring)
		return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_Signal_{Signal: sig}}
	}, "signal:"+sig.GetSignalId())
	if err != nil {
		return 0, err
	}
	return at, in.wait(ctx, key, res)
}

// wait waits until the event published as res is accepted.
func (in *devIngest) wait(ctx context.Context, key []byte, res *pubsub.PublishResult) error {
	if _, err := res.Get(ctx); err != nil {
		in.mu.Lock()
		if in.pub != nil {
			in.pub.ResumePublish(wire.OrderingKey(key))
		}
		in.mu.Unlock()
		return &console.Error{Code: console.CodeIngest, Detail: "publishing the event", Err: err}
	}
	return nil
}

// publish publishes one event without waiting for it to be accepted (wait does): a batch of
// events travels at once.
func (in *devIngest) publish(ctx context.Context, key, body []byte) (int64, *pubsub.PublishResult, error) {
	return in.publishEnvelope(ctx, key, func(at int64) *pb.AgentEnvelope {
		return &pb.AgentEnvelope{EntityKey: key, EventTimeMs: at, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: body}}
	}, "event:"+randomHex(12))
}

// publishEnvelope publishes the envelope of key that envelope makes for its event time, under
// the envelope id id.
func (in *devIngest) publishEnvelope(ctx context.Context, key []byte, envelope func(at int64) *pb.AgentEnvelope, id string) (int64, *pubsub.PublishResult, error) {
	if in.closed.Load() {
		return 0, nil, &console.Error{Code: console.CodeUnavailable, Detail: "dev is stopping: it takes no more events"}
	}
	in.mu.Lock()
	at := max(time.Now().UnixMilli(), in.last+1)
	in.last = at
	if in.pub == nil {
		in.pub = in.client.Publisher(in.topic)
		in.pub.EnableMessageOrdering = true
	}
	pub := in.pub
	in.mu.Unlock()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(envelope(at))
	if err != nil {
		return 0, nil, err
	}
	res := pub.Publish(ctx, &pubsub.Message{Data: b, OrderingKey: wire.OrderingKey(key), Attributes: map[string]string{
		wire.AttrType: "beam_agents.v1.AgentEnvelope", wire.AttrContentType: wire.ContentTypeProto,
		wire.DefaultEnvelopeIDAttribute: id,
	}})
	return at, res, nil
}

func (in *devIngest) stop() {
	in.closed.Store(true)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.pub != nil {
		in.pub.Stop()
		in.pub = nil
	}
}

// waitConsumed waits until every message published to topic is acknowledged (the pipeline's
// reader acknowledges a message once the bundle holding it committed), for at most within.
func waitConsumed(srv *pstest.Server, topic string, within time.Duration) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		open := 0
		for _, m := range srv.Messages() {
			if m.Topic == topic && m.Acks == 0 {
				open++
			}
		}
		if open == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// republishPending publishes the pending intents of the restored snapshots to the intents
// topic, but those answered by a restored envelope (a result or decision the last run took
// and its key had not run yet). It returns how many it published.
func republishPending(ctx context.Context, client *pubsub.Client, topic, snapshots, envelopes string) (int, error) {
	if snapshots == "" {
		return 0, nil
	}
	snaps, err := readMessages([]string{snapshots}, func() *pb.StateSnapshot { return &pb.StateSnapshot{} })
	if err != nil {
		return 0, err
	}
	answered := map[string]bool{}
	if envelopes != "" {
		envs, err := readMessages([]string{envelopes}, func() *pb.AgentEnvelope { return &pb.AgentEnvelope{} })
		if err != nil {
			return 0, err
		}
		for _, env := range envs {
			switch {
			case env.GetToolResult() != nil:
				answered[env.GetToolResult().GetIntentId()] = true
			case env.GetApproval() != nil:
				answered[env.GetApproval().GetIntentId()] = true
			}
		}
	}
	pub := client.Publisher(topic)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	n := 0
	for _, s := range snaps {
		for _, ti := range s.GetPending() {
			if answered[ti.GetIntentId()] {
				continue
			}
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(ti)
			if err != nil {
				return n, err
			}
			m, err := bapubsub.OutputMessage(string(ti.ProtoReflect().Descriptor().FullName()), b)
			if err != nil {
				return n, err
			}
			if _, err := pub.Publish(ctx, &pubsub.Message{Data: m.GetData(), Attributes: m.GetAttributes(), OrderingKey: m.GetOrderingKey()}).Get(ctx); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// devWatch prints one line per activation attempt (from the trace events), per final reply
// and per dead letter.
type devWatch struct {
	e              *env
	client         *pubsub.Client
	subs           []string
	traces, finals string
	attempts       map[string]*attempt // by the attempt's span id
	mu             sync.Mutex
	answered       map[string]bool // entity keys with a final reply or a dead letter
	changed        chan struct{}
}

// attempt is what the trace events of one activation attempt said so far.
type attempt struct {
	key                 string
	seq                 int64
	kind                string
	billed, cached      int
	emitted, suspension []string
	// signal and wake are the durable wait the attempt suspended on: the awaited signal's
	// name and the wake time (ms), when set.
	signal, wake string
}

func (w *devWatch) loop(ctx context.Context) {
	for ctx.Err() == nil {
		if w.pullOnce(ctx) == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// flush prints whatever the subscriptions still hold.
func (w *devWatch) flush(ctx context.Context) {
	for i := 0; i < 50 && w.pullOnce(ctx) > 0; i++ {
	}
}

func (w *devWatch) pullOnce(ctx context.Context) int {
	n := 0
	for _, sub := range w.subs {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		resp, err := w.client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 500})
		cancel()
		if err != nil {
			continue
		}
		var ids []string
		for _, rm := range resp.GetReceivedMessages() {
			ids = append(ids, rm.GetAckId())
			w.handle(sub, rm.GetMessage().GetData())
			n++
		}
		if len(ids) > 0 {
			w.client.SubscriptionAdminClient.Acknowledge(context.WithoutCancel(ctx), &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids})
		}
	}
	return n
}

func (w *devWatch) handle(sub string, data []byte) {
	if sub != w.traces {
		key, line := describeLive(data, sub == w.finals)
		fmt.Fprintln(w.e.stdout, line)
		w.mu.Lock()
		w.answered[key] = true
		if w.changed != nil {
			close(w.changed)
			w.changed = nil
		}
		w.mu.Unlock()
		return
	}
	ev := &pb.TraceEvent{}
	if proto.Unmarshal(data, ev) != nil {
		return
	}
	id := hex.EncodeToString(ev.GetParentSpanId())
	if ev.GetEventType() == pb.TraceEvent_ACTIVATION_START || ev.GetEventType() == pb.TraceEvent_ACTIVATION_END {
		id = hex.EncodeToString(ev.GetSpanId())
	}
	a := w.attempts[id]
	if a == nil {
		a = &attempt{key: string(ev.GetEntityKey()), seq: ev.GetSeq()}
		w.attempts[id] = a
	}
	attrs := ev.GetAttributes()
	switch ev.GetEventType() {
	case pb.TraceEvent_ACTIVATION_START:
		a.kind = attrs[tracing.AttrActivationKind]
	case pb.TraceEvent_LLM_CALL:
		if attrs[tracing.AttrBilled] == "true" {
			a.billed++
		} else {
			a.cached++
		}
	case pb.TraceEvent_INTENT_EMITTED:
		a.emitted = append(a.emitted, fmt.Sprintf("%s %s %s", attrs[tracing.AttrIntentKind], attrs[tracing.AttrToolName], attrs[tracing.AttrIntentID]))
	case pb.TraceEvent_SUSPENDED:
		if ids := attrs[tracing.AttrIntentID]; ids != "" {
			a.suspension = strings.Split(ids, ",")
		}
		a.signal, a.wake = attrs[tracing.AttrSignalName], attrs[tracing.AttrWakeAt]
	case pb.TraceEvent_ACTIVATION_END:
		delete(w.attempts, id)
		fmt.Fprintln(w.e.stdout, a.line(attrs[tracing.AttrActivationStatus]))
	}
}

// line is the attempt's line: key, seq, what drove it, how it ended, its model calls and
// what it waits on.
func (a *attempt) line(status string) string {
	calls := fmt.Sprintf("model calls %d", a.billed)
	if a.cached > 0 {
		calls += fmt.Sprintf(" (+%d from the replay cache)", a.cached)
	}
	s := fmt.Sprintf("activation   %-12s seq %d  %s → %s  %s", a.key, a.seq, a.kind, status, calls)
	if status == tracing.StatusSuspended {
		waits := a.emitted
		if len(waits) == 0 {
			waits = a.suspension
		}
		if a.signal != "" {
			waits = append(waits, "SIGNAL "+a.signal)
		}
		if ms, err := strconv.ParseInt(a.wake, 10, 64); err == nil {
			waits = append(waits, "TIMER "+time.UnixMilli(ms).UTC().Format(time.RFC3339))
		}
		s += "  waits on " + strings.Join(waits, ", ")
	}
	return s
}

// waitAll waits until every entity of want has a final reply or a dead letter (or ctx
// ends), then says so: demo --live's end.
func (w *devWatch) waitAll(ctx context.Context, want map[string]bool) int {
	for {
		w.mu.Lock()
		open := 0
		for k := range want {
			if !w.answered[k] {
				open++
			}
		}
		ch := make(chan struct{})
		w.changed = ch
		w.mu.Unlock()
		if open == 0 {
			keys := slices.Collect(func(yield func(string) bool) {
				for k := range want {
					if !yield(k) {
						return
					}
				}
			})
			sort.Strings(keys)
			fmt.Fprintf(w.e.stdout, "every conversation answered: %s\n", strings.Join(keys, ", "))
			return 0
		}
		select {
		case <-ctx.Done():
			w.e.errorf("stopped with %d conversation(s) open: %v", open, ctx.Err())
			return 1
		case <-ch:
		}
	}
}

// followFile reads path as it grows, each complete line an event ({"key":…,"body":…}, the
// JSON API's), and ingests it. How far it read is kept in state (follow.json): a restart
// goes on from there; a file that became shorter (replaced) is read from its start.
func followFile(ctx context.Context, e *env, in *devIngest, path, state string) {
	type mark struct {
		Path   string `json:"path"`
		Offset int64  `json:"offset"`
	}
	var at mark
	if b, err := os.ReadFile(state); err == nil && json.Unmarshal(b, &at) == nil && at.Path == path {
	} else {
		at = mark{Path: path}
	}
	save := func() {
		b, _ := json.Marshal(at)
		if os.WriteFile(state+".tmp", b, 0o600) == nil {
			os.Rename(state+".tmp", state)
		}
	}
	// sent is one published line: its key, its result, and the offset after it.
	type sent struct {
		key []byte
		res *pubsub.PublishResult
		end int64
	}
	for ctx.Err() == nil {
		b, err := os.ReadFile(path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			e.errorf("--follow: %v", unwrapPath(err))
		case int64(len(b)) < at.Offset:
			at.Offset = 0
		}
		// Every complete line read is published at once, then waited for: the read position
		// moves past the lines accepted in order, up to the first that was not (which is read
		// again next time).
		var batch []sent
		for off := at.Offset; err == nil && ctx.Err() == nil; {
			rest := b[off:]
			nl := slices.Index(rest, '\n')
			if nl < 0 {
				break
			}
			text := strings.TrimSpace(string(rest[:nl]))
			end := off + int64(nl) + 1
			if text != "" {
				var ev console.APIEvent
				dec := json.NewDecoder(strings.NewReader(text))
				dec.DisallowUnknownFields()
				key, body, derr := []byte(nil), []byte(nil), dec.Decode(&ev)
				if derr == nil {
					key, body, derr = ev.Decode()
				}
				if derr != nil {
					e.errorf("--follow %s: a line at byte %d is not an event ({\"key\":…,\"body\":…}): %v; passed over", path, off, derr)
				} else {
					_, res, perr := in.publish(ctx, key, body)
					if perr != nil {
						e.errorf("--follow: %v", perr)
						break
					}
					batch = append(batch, sent{key: key, res: res})
				}
			}
			off = end
			if len(batch) > 0 {
				batch[len(batch)-1].end = end
			} else {
				at.Offset = end // lines passed over before any publish
			}
		}
		for _, s := range batch {
			if err := in.wait(ctx, s.key, s.res); err != nil {
				e.errorf("--follow: %v", err)
				break
			}
			at.Offset = s.end
		}
		save()
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
