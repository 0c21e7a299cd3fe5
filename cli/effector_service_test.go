package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/effector"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/testsvc"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// `beamagents effector` as a Pub/Sub service (pstest) with a Redis dedup store and the
// console: each intent message gets its result on the results topic (a redelivered one the
// recorded result, not a second execution), the forged one a REJECTED result, the malformed
// message is counted and acknowledged, and the approval is listed, not executed.
func TestEffectorService(t *testing.T) {
	redisAddr := testsvc.Redis(t)
	srv := pstest.NewServer()
	defer srv.Close()
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	const (
		intents = "projects/p/topics/intents"
		sub     = "projects/p/subscriptions/effector"
		results = "projects/p/topics/results"
	)
	ctx := context.Background()
	srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: intents})
	srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: results})
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: sub, Topic: intents, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ring, lookupID := writeIntents(t, dir)
	recs, err := effector.ReadIntents(filepath.Join(dir, "in", "intents.*"))
	if err != nil {
		t.Fatal(err)
	}
	var published int
	for _, r := range recs {
		if r.Err != nil {
			srv.Publish(intents, []byte("not an intent"), nil)
			continue
		}
		b, _ := proto.Marshal(r.Intent)
		srv.Publish(intents, b, map[string]string{wire.AttrType: "beam_agents.v1.ToolIntent"})
		published++
		if r.Intent.GetIntentId() == lookupID {
			srv.Publish(intents, b, nil) // a redelivery
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	prev := effectorContext
	effectorContext = func() (context.Context, context.CancelFunc) { return runCtx, cancel }
	defer func() { effectorContext = prev }()
	type exit struct {
		code        int
		out, errOut string
	}
	done := make(chan exit, 1)
	go func() {
		code, out, errOut := runCLI(t, "", "effector", "--input_subscription", sub, "--results_topic", results,
			"--keyring", "file:"+ring, "--verify", "require", "--dedup", "redis:"+redisAddr,
			"--console", "127.0.0.1:0", "--approver_header", "X-Approver", "--allowed_hosts", "approvals.example.com")
		done <- exit{code, out, errOut}
	}()
	resultMsgs := func() []*pstest.Message {
		var out []*pstest.Message
		for _, m := range srv.Messages() {
			if m.Topic == results {
				out = append(out, m)
			}
		}
		return out
	}
	allAcked := func() bool {
		for _, m := range srv.Messages() {
			if m.Topic == intents && m.Acks == 0 {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(60 * time.Second)
	for (len(resultMsgs()) < 4 || !allAcked()) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	for _, want := range []string{"executed                     2", "deduplicated                 1", "rejected                     1",
		"malformed                    1", "approvals                    1"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	msgs := resultMsgs()
	if len(msgs) != 4 || !allAcked() {
		t.Fatalf("%d results, all acked %v", len(msgs), allAcked())
	}
	var lookups [][]byte
	for _, m := range msgs {
		env := &pb.AgentEnvelope{}
		if err := proto.Unmarshal(m.Data, env); err != nil {
			t.Fatal(err)
		}
		tr := env.GetToolResult()
		if m.OrderingKey != string(env.GetEntityKey()) || m.Attributes[wire.DefaultEnvelopeIDAttribute] != "result:"+tr.GetIntentId() {
			t.Errorf("attributes %v, ordering key %q", m.Attributes, m.OrderingKey)
		}
		if tr.GetIntentId() == lookupID {
			lookups = append(lookups, m.Data)
		}
	}
	if len(lookups) != 2 || string(lookups[0]) != string(lookups[1]) {
		t.Fatalf("the redelivered lookup was answered differently")
	}
}
