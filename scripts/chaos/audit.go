package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	gpubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"google.golang.org/protobuf/proto"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pubsub/wire"
)

func publish(args []string) error {
	fs := flag.NewFlagSet("chaos-publish", flag.ContinueOnError)
	n := fs.Int("n", 300, "customers")
	topic := fs.String("topic", "", "the pipeline's input topic")
	rate := fs.Int("rate", 30, "events per second")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	c, err := gpubsub.NewClient(ctx, "chaos")
	if err != nil {
		return err
	}
	defer c.Close()
	tick := time.NewTicker(time.Second / time.Duration(max(*rate, 1)))
	defer tick.Stop()
	for i := range *n {
		<-tick.C
		env := &pb.AgentEnvelope{EntityKey: []byte(customer(i)), EventTimeMs: time.Now().UnixMilli(),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("Where is my order A-1001?")}}
		b, err := proto.Marshal(env)
		if err != nil {
			return err
		}
		_, err = c.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{Topic: *topic, Messages: []*pubsubpb.PubsubMessage{{
			Data: b, Attributes: map[string]string{wire.DefaultEnvelopeIDAttribute: fmt.Sprintf("chaos-event-%d", i)},
		}}})
		if err != nil {
			return err
		}
	}
	return nil
}

// tally is what the audit subscriptions delivered.
type tally struct {
	intents  map[string]string // TOOL intent id → entity
	results  map[string]int    // intent id → result messages
	finals   map[string]bool   // entity → a final reply
	dead     map[string]int    // reason → dead letters
	received int
}

func (t *tally) add(kind string, data []byte) {
	t.received++
	switch kind {
	case "intents":
		ti := &pb.ToolIntent{}
		if proto.Unmarshal(data, ti) == nil && ti.GetKind() == pb.ToolIntent_TOOL {
			t.intents[ti.GetIntentId()] = string(ti.GetEntityKey())
		}
	case "results":
		env := &pb.AgentEnvelope{}
		if proto.Unmarshal(data, env) == nil && env.GetToolResult() != nil {
			t.results[env.GetToolResult().GetIntentId()]++
		}
	case "finals":
		f := &pb.FinalReply{}
		if proto.Unmarshal(data, f) == nil {
			t.finals[string(f.GetEntityKey())] = true
		}
	case "errors":
		r := &pb.ActivationErrorRecord{}
		reason := "rejected_input"
		if proto.Unmarshal(data, r) == nil && r.GetReason() != "" {
			reason = r.GetReason()
		}
		t.dead[reason]++
	}
}

func (t *tally) answered() int {
	n := 0
	for id := range t.intents {
		if t.results[id] > 0 {
			n++
		}
	}
	return n
}

func audit(args []string) error {
	fs := flag.NewFlagSet("chaos-audit", flag.ContinueOnError)
	n := fs.Int("n", 300, "customers")
	kills := fs.Int("kills", 0, "effector kills done")
	effectsPath := fs.String("effects", "", "the tool's effect log")
	wait := fs.Duration("wait", 5*time.Minute, "how long to wait for every customer's final reply")
	subs := map[string]*string{
		"intents": fs.String("intents_sub", "", "subscription on the intents topic"),
		"results": fs.String("results_sub", "", "subscription on the input topic (results)"),
		"finals":  fs.String("finals_sub", "", "subscription on the finals topic"),
		"errors":  fs.String("errors_sub", "", "subscription on the errors topic"),
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	c, err := gpubsub.NewClient(ctx, "chaos")
	if err != nil {
		return err
	}
	defer c.Close()
	t := &tally{intents: map[string]string{}, results: map[string]int{}, finals: map[string]bool{}, dead: map[string]int{}}
	deadline := time.Now().Add(*wait)
	for {
		got := 0
		for kind, sub := range subs {
			resp, err := c.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: *sub, MaxMessages: 1000})
			if err != nil {
				return fmt.Errorf("pull %s: %w", *sub, err)
			}
			var ids []string
			for _, m := range resp.GetReceivedMessages() {
				t.add(kind, m.GetMessage().GetData())
				ids = append(ids, m.GetAckId())
			}
			if len(ids) > 0 {
				got += len(ids)
				if err := c.SubscriptionAdminClient.Acknowledge(ctx, &pubsubpb.AcknowledgeRequest{Subscription: *sub, AckIds: ids}); err != nil {
					return err
				}
			}
		}
		if got == 0 && (len(t.finals) >= *n && t.answered() == len(t.intents) || time.Now().After(deadline)) {
			break
		}
		if got == 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
	effects, total, err := readEffects(*effectsPath)
	if err != nil {
		return err
	}
	distinct, stray := 0, 0
	for id := range effects {
		distinct++
		if _, ok := t.intents[id]; !ok {
			stray++
		}
	}
	redelivered := 0
	for _, r := range t.results {
		redelivered += max(r-1, 0)
	}
	var reasons []string
	for r, k := range t.dead {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, k))
	}
	sort.Strings(reasons)
	unanswered := len(t.intents) - t.answered()
	withoutIntent := max(*n-len(t.intents), 0)
	fmt.Printf("customers %d, final replies %d, results %d (republished %d), effects not matching an intent %d, dead letters: %s\n",
		*n, len(t.finals), t.answered(), redelivered, stray, strings.Join(append([]string{}, reasons...), ", "))
	fmt.Printf("kills %d, intents %d, effects %d, duplicates in the crash window %d, lost %d\n",
		*kills, len(t.intents), distinct, total-distinct, unanswered+withoutIntent)
	if unanswered+withoutIntent > 0 || distinct != len(t.intents) {
		os.Exit(1)
	}
	return nil
}

// readEffects counts the effect log's lines per intent id.
func readEffects(path string) (map[string]int, int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]int{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	m, total := map[string]int{}, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			m[id]++
			total++
		}
	}
	return m, total, sc.Err()
}
