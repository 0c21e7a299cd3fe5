package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	pubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/jsontext"
	"github.com/beamagents/beamagents/pipeline"
	bapubsub "github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/pubsub/wire"
)

type liveFlags struct {
	on      *bool
	console *string
	timeout *time.Duration
}

func defineLiveFlags(fs *flag.FlagSet) liveFlags {
	return liveFlags{
		on:      fs.Bool("live", false, "run the whole loop live: Pub/Sub emulator, streaming pipeline, effector and approval console"),
		console: fs.String("console", "127.0.0.1:8089", "with --live: the approval console's address"),
		timeout: fs.Duration("live_timeout", 30*time.Minute, "with --live: give up after this long"),
	}
}

// liveConsoleReady, when set (by tests), is called with the console's URL and credentials
// once the live demo is up, as a person would open the page.
var liveConsoleReady func(url, user, password string)

// liveTopics are the live demo's Pub/Sub names on the in-process emulator.
type liveTopics struct {
	events, eventsSub, intents, intentsSub, finals, finalsSub, errors, errorsSub, traces string
	consoleSubs                                                                          []string // the console's own, one per output topic
}

func newLiveTopics(ctx context.Context, srv *pstest.Server) (liveTopics, error) {
	const p = "projects/beamagents-demo"
	t := liveTopics{
		events: p + "/topics/events", eventsSub: p + "/subscriptions/pipeline",
		intents: p + "/topics/intents", intentsSub: p + "/subscriptions/effector",
		finals: p + "/topics/finals", finalsSub: p + "/subscriptions/finals",
		errors: p + "/topics/errors", errorsSub: p + "/subscriptions/errors",
		traces: p + "/topics/traces",
	}
	subs := map[string]string{t.events: t.eventsSub, t.intents: t.intentsSub, t.finals: t.finalsSub, t.errors: t.errorsSub}
	for _, topic := range []string{t.intents, t.finals, t.errors, t.traces} {
		t.consoleSubs = append(t.consoleSubs, p+"/subscriptions/console-"+topic[strings.LastIndex(topic, "/")+1:])
	}
	for topic, sub := range subs {
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			return t, err
		}
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 30}); err != nil {
			return t, err
		}
	}
	for _, sub := range t.consoleSubs {
		topic := p + "/topics/" + strings.TrimPrefix(sub, p+"/subscriptions/console-")
		if topic == t.traces {
			if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
				return t, err
			}
		}
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: topic, AckDeadlineSeconds: 30}); err != nil {
			return t, err
		}
	}
	return t, nil
}

// runLiveDemo runs the whole loop on one machine: Pub/Sub (the client library's in-process
// emulator), the pipeline streaming on Prism, the effector running the example's tools, and
// the console (approvals included) on a loopback port. It publishes the demo's events stamped now and
// ends when every entity that got one has a final reply or a dead letter, or on Ctrl-C.
func runLiveDemo(e *env, dir, consoleAddr string, timeout time.Duration) int {
	opts, kr, err := prepareDemo(dir)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	if !verboseRunner() {
		// The streaming runner logs every bundle finalization; --verbose_runner shows it.
		slog.SetDefault(slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError + 4})))
	}
	ctx, stop := effectorContext()
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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
	eff, store, err := liveEffector(dir, kr)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer store.Close()
	client, err := pubsub.NewClient(ctx, "beamagents-demo")
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer client.Close()
	user, password := "demo", randomHex(8)
	consoleURL, closeConsole, err := liveConsole(ctx, eff, client, topics, dir, consoleAddr, user, password)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	defer closeConsole()

	run := bapubsub.NewRun()
	defer run.Close()
	opts.Input, opts.OutputDir = "", filepath.Join(dir, "output")
	opts.InputSubscription, opts.IntentsTopic, opts.FinalsTopic, opts.ErrorsTopic, opts.TracesTopic = topics.eventsSub, topics.intents, topics.finals, topics.errors, topics.traces
	opts.PubSub.Run = run.ID()
	pipeDone := make(chan error, 1)
	go func() {
		_, err := pipeline.Run(context.WithoutCancel(ctx), "prism", opts)
		pipeDone <- err
	}()
	effCtx, stopEff := context.WithCancel(ctx)
	defer stopEff()
	effDone := make(chan error, 1)
	go func() {
		effDone <- eff.Serve(effCtx, client, effector.ServiceOptions{Subscription: topics.intentsSub, ResultsTopic: topics.events})
	}()

	entities, err := publishDemoEvents(ctx, client, topics.events)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "beamagents demo --live: agent %q streaming on Prism over an in-process Pub/Sub emulator\n", demo.Agent)
	fmt.Fprintf(e.stdout, "published %d events; console: %s (approvals: %sapprovals, user %s, password %s)\n", len(entities), consoleURL, consoleURL, user, password)
	if liveConsoleReady != nil {
		go liveConsoleReady(consoleURL, user, password)
	}
	code := watchLive(ctx, e, client, topics, entities)

	stopEff()
	<-effDone
	run.Drain()
	select {
	case err := <-pipeDone:
		if err != nil {
			e.errorf("pipeline: %v", err)
			code = 1
		}
	case <-time.After(2 * time.Minute):
		e.errorf("the pipeline did not drain within 2 minutes")
		code = 1
	}
	fmt.Fprintln(e.stdout, "effector counters:")
	printEffectorCounters(e.stdout, eff.Metrics().Snapshot())
	return code
}

func liveEffector(dir string, kr *intent.Keyring) (*effector.Effector, store.Store, error) {
	bindings, err := effector.AgentBindings(demo.Agent)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.OpenBolt(filepath.Join(dir, "effector.db"))
	if err != nil {
		return nil, nil, err
	}
	eff, err := effector.New(effector.Options{Keyring: kr, Store: st, Tools: bindings})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return eff, st, nil
}

// publishDemoEvents publishes the demo's external events with event time now (the effector
// checks expiry against its own clock) and returns their entity keys.
func publishDemoEvents(ctx context.Context, client *pubsub.Client, topic string) (map[string]bool, error) {
	pub := client.Publisher(topic)
	pub.EnableMessageOrdering = true
	defer pub.Stop()
	entities := map[string]bool{}
	now := time.Now().UnixMilli()
	for i, line := range bytes.Split(demo.Envelopes, []byte("\n")) {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) != nil || env.GetExternalEvent() == nil {
			continue
		}
		env.EventTimeMs = now + int64(i)
		b, _ := proto.Marshal(env)
		res := pub.Publish(ctx, &pubsub.Message{Data: b, OrderingKey: wire.OrderingKey(env.GetEntityKey())})
		if _, err := res.Get(ctx); err != nil {
			return nil, err
		}
		entities[string(env.GetEntityKey())] = true
	}
	return entities, nil
}

// watchLive prints each final reply and dead letter as it arrives, until every entity has
// one.
func watchLive(ctx context.Context, e *env, client *pubsub.Client, t liveTopics, entities map[string]bool) int {
	open := len(entities)
	done := map[string]bool{}
	for open > 0 {
		if ctx.Err() != nil {
			e.errorf("stopped with %d conversation(s) open: %v", open, ctx.Err())
			return 1
		}
		for _, sub := range []string{t.finalsSub, t.errorsSub} {
			pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			resp, err := client.SubscriptionAdminClient.Pull(pctx, &pubsubpb.PullRequest{Subscription: sub, MaxMessages: 100})
			cancel()
			if err != nil {
				continue
			}
			var ids []string
			for _, rm := range resp.GetReceivedMessages() {
				ids = append(ids, rm.GetAckId())
				key, line := describeLive(rm.GetMessage().GetData(), sub == t.finalsSub)
				fmt.Fprintln(e.stdout, line)
				if entities[key] && !done[key] {
					done[key] = true
					open--
				}
			}
			if len(ids) > 0 {
				client.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: sub, AckIds: ids})
			}
		}
	}
	keys := make([]string, 0, len(done))
	for k := range done {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(e.stdout, "every conversation answered: %s\n", strings.Join(keys, ", "))
	return 0
}

func describeLive(data []byte, final bool) (key, line string) {
	if final {
		f := &pb.FinalReply{}
		if proto.Unmarshal(data, f) != nil {
			return "", "final reply (undecodable)"
		}
		msg := replyText(f)
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		return string(f.GetEntityKey()), fmt.Sprintf("final reply  %-12s %s", f.GetEntityKey(), msg)
	}
	d := &pb.ActivationErrorRecord{}
	if proto.Unmarshal(data, d) != nil {
		return "", "dead letter (undecodable)"
	}
	return string(d.GetEntityKey()), fmt.Sprintf("dead letter  %-12s %s", d.GetEntityKey(), d.GetReason())
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// replyText is the text of the reply's fields (its message is the admitted proposal
// document), or the message itself when it has none.
func replyText(f *pb.FinalReply) string {
	var doc struct {
		Value struct {
			Fields map[string]any `json:"fields"`
		} `json:"value"`
	}
	if jsontext.Decode(f.GetMessage(), &doc, jsontext.DecodeOptions{}) == nil {
		var parts []string
		for _, v := range doc.Value.Fields {
			if s, ok := v.(string); ok {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			sort.Strings(parts)
			return strings.Join(parts, " ")
		}
	}
	return strings.TrimSpace(f.GetMessage())
}
