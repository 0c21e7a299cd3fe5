package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/jsontext"
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
	events, eventsSub, intents, intentsSub, finals, finalsSub, errors, errorsSub, traces, tracesSub string
	consoleSubs                                                                                     []string // the console's own, one per output topic
}

func newLiveTopics(ctx context.Context, srv *pstest.Server) (liveTopics, error) {
	const p = "projects/beamagents-demo"
	t := liveTopics{
		events: p + "/topics/events", eventsSub: p + "/subscriptions/pipeline",
		intents: p + "/topics/intents", intentsSub: p + "/subscriptions/effector",
		finals: p + "/topics/finals", finalsSub: p + "/subscriptions/finals",
		errors: p + "/topics/errors", errorsSub: p + "/subscriptions/errors",
		traces: p + "/topics/traces", tracesSub: p + "/subscriptions/watch-traces",
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
	// The terminal's: one line per activation attempt, in each key's order.
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: t.tracesSub, Topic: t.traces, AckDeadlineSeconds: 30, EnableMessageOrdering: true}); err != nil {
		return t, err
	}
	return t, nil
}

// runLiveDemo is `beamagents dev` running the bundled agent (serveDev): Pub/Sub (the client
// library's in-process emulator), the pipeline streaming on Prism, the effector running the
// example's tools, and the console (approvals included) on a loopback port, with its state
// under dir. It publishes the demo's events stamped now and ends when every entity that got
// one has a final reply or a dead letter, or on Ctrl-C.
func runLiveDemo(e *env, dir, consoleAddr string, timeout time.Duration) int {
	opts, _, err := prepareDemo(dir)
	if err != nil {
		e.errorf("%v", err)
		return 1
	}
	var events []*pb.AgentEnvelope
	entities := map[string]bool{}
	for _, line := range bytes.Split(demo.Envelopes, []byte("\n")) {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) != nil || env.GetExternalEvent() == nil {
			continue
		}
		events = append(events, env)
		entities[string(env.GetEntityKey())] = true
	}
	stateDir := filepath.Join(dir, "dev")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		e.errorf("%v", err)
		return 1
	}
	return serveDev(e, &devSettings{
		opts: opts, stateDir: stateDir, listen: consoleAddr, user: "demo", password: randomHex(8),
		events: events, until: entities, timeout: timeout, ready: liveConsoleReady,
		banner: fmt.Sprintf("beamagents demo --live: agent %q streaming on Prism over an in-process Pub/Sub emulator (beamagents dev with the bundled agent); %d events", demo.Agent, len(events)),
	})
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
	detail := d.GetDetail()
	if len(detail) > 300 {
		detail = detail[:300] + "…"
	}
	return string(d.GetEntityKey()), fmt.Sprintf("dead letter  %-12s %s: %s", d.GetEntityKey(), d.GetReason(), detail)
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
