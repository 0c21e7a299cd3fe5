package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
)

func init() {
	register(&command{name: "pubsub-server", summary: "serve an in-memory Pub/Sub server on a loopback port, for local runs and tests", run: runPubsubServer})
}

// runPubsubServer serves the Pub/Sub client library's in-memory server (pstest) until SIGINT
// or SIGTERM, with the topics and subscriptions given created. Clients reach it through
// PUBSUB_EMULATOR_HOST. Messages live in this process's memory only.
func runPubsubServer(e *env, args []string) int {
	fs := newFlags(e, "pubsub-server", "pubsub-server [--addr 127.0.0.1:8085] [--topic projects/P/topics/T ...] [--subscription projects/P/subscriptions/S=projects/P/topics/T ...]")
	addr := fs.String("addr", "127.0.0.1:8085", "address to listen on (host:port; port 0 picks a free one)")
	var topics, subs listFlag
	fs.Var(&topics, "topic", "topic to create (repeatable)")
	fs.Var(&subs, "subscription", "subscription to create, SUB=TOPIC (repeatable; the topic is created too)")
	ackDeadline := fs.Int("ack_deadline_seconds", 10, "the subscriptions' ack deadline")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	type pair struct{ sub, topic string }
	var pairs []pair
	checks := []check{noArgs(fs), atLeast("ack_deadline_seconds", *ackDeadline, 10), atMost("ack_deadline_seconds", *ackDeadline, 600)}
	for _, t := range topics {
		checks = append(checks, pubsubTopic("topic", t))
	}
	for _, s := range subs {
		sub, topic, ok := strings.Cut(s, "=")
		if !ok {
			checks = append(checks, func() error { return refuseFlag("subscription", "%q: want SUB=TOPIC", s) })
			continue
		}
		checks = append(checks, pubsubSubscription("subscription", sub), pubsubTopic("subscription", topic))
		pairs = append(pairs, pair{sub, topic})
		topics = append(topics, topic)
	}
	if code, ok := checkFlags(e, checks...); !ok {
		return code
	}
	srv := pstest.NewServerWithAddress(*addr)
	defer srv.Close()
	ctx := context.Background()
	seen := map[string]bool{}
	for _, t := range topics {
		if seen[t] {
			continue
		}
		seen[t] = true
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: t}); err != nil {
			e.errorf("creating %s: %v", t, err)
			return 1
		}
	}
	for _, p := range pairs {
		if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: p.sub, Topic: p.topic, AckDeadlineSeconds: int32(*ackDeadline)}); err != nil {
			e.errorf("creating %s: %v", p.sub, err)
			return 1
		}
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	fmt.Fprintf(e.stdout, "pubsub-server listening on %s (PUBSUB_EMULATOR_HOST=%s): %d topics, %d subscriptions\n", srv.Addr, srv.Addr, len(seen), len(pairs))
	<-sig
	return 0
}
