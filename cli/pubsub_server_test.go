package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gpubsub "cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
)

// lineWriter collects what a command writes and signals each write.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return w.buf.Write(b)
}

// text returns what w collected so far.
func (w *lineWriter) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// `beamagents pubsub-server` serves Pub/Sub on loopback with the topics and subscriptions it
// was given until SIGINT: a client pointed at it publishes and pulls.
func TestPubsubServer(t *testing.T) {
	out, errb := &lineWriter{wrote: make(chan struct{}, 1)}, &lineWriter{wrote: make(chan struct{}, 1)}
	done := make(chan int, 1)
	go func() {
		done <- run(&env{stdout: out, stderr: errb}, []string{"pubsub-server", "--addr", "127.0.0.1:0", "--ack_deadline_seconds", "20",
			"--topic", "projects/p/topics/extra", "--subscription", "projects/p/subscriptions/s=projects/p/topics/t"})
	}()
	addrRE := regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; {
		if m := addrRE.FindStringSubmatch(out.text()); m != nil {
			addr = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no address: %s %s", out.text(), errb.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Setenv("PUBSUB_EMULATOR_HOST", addr)
	ctx := context.Background()
	c, err := gpubsub.NewClient(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.TopicAdminClient.GetTopic(ctx, &pubsubpb.GetTopicRequest{Topic: "projects/p/topics/extra"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TopicAdminClient.Publish(ctx, &pubsubpb.PublishRequest{Topic: "projects/p/topics/t", Messages: []*pubsubpb.PubsubMessage{{Data: []byte("hello")}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := c.SubscriptionAdminClient.Pull(ctx, &pubsubpb.PullRequest{Subscription: "projects/p/subscriptions/s", MaxMessages: 1})
	if err != nil || len(resp.GetReceivedMessages()) != 1 || string(resp.GetReceivedMessages()[0].GetMessage().GetData()) != "hello" {
		t.Fatalf("pull %v: %v", resp, err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.text())
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a subscription without its topic", []string{"--subscription", "projects/p/subscriptions/s"}, "--subscription:"},
		{"a bad topic", []string{"--topic", "events"}, "--topic:"},
		{"an ack deadline below Pub/Sub's minimum", []string{"--ack_deadline_seconds", "0"}, "--ack_deadline_seconds:"},
		{"an extra argument", []string{"more"}, "unexpected argument"},
	} {
		if code, _, errOut := runCLI(t, "", append([]string{"pubsub-server"}, tc.args...)...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d %s", tc.name, code, errOut)
		}
	}
}
