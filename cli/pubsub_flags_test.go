package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"

	"github.com/beamagents/beamagents/examples/support"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// `run --input_subscription` streams until interrupted: the demo's envelopes go in through
// Pub/Sub, replies and intents come out on their topics, the status line counts them, and
// SIGINT drains the job (exit 0) with every input message acknowledged.
func TestRunStreamingDrainsOnInterrupt(t *testing.T) {
	srv, ring, lines := demoPubSub(t)
	in, sub, finals, ints, errs := demoIn, demoSub, demoFinals, demoIntents, demoErrors
	for _, l := range lines {
		srv.Publish(in, l, map[string]string{wire.AttrContentType: wire.ContentTypeJSON})
	}
	t.Cleanup(func() {
		for _, f := range []string{"input_subscription", "intents_topic", "finals_topic", "errors_topic", "status_interval", "agent", "keyring"} {
			flag.Set(f, flag.Lookup(f).DefValue)
		}
	})
	out, errOut := streamUntil(t, 90*time.Second, func() bool { return allAcked(srv, in, len(lines)) && count(srv, finals) >= 4 },
		"run", "--agent", support.Name, "--input_subscription", sub,
		"--intents_topic", ints, "--finals_topic", finals, "--errors_topic", errs, "--status_interval", "100ms", "--keyring", "file:"+ring)
	for _, want := range []string{"envelopes in 10 | activations ", "dead letters ", "watermark lag ", "draining:"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "drained after") {
		t.Errorf("stdout: %s", out)
	}
	// After the drain every deadline has fired: customer-4's approval fails closed.
	if got := count(srv, finals); got != 4 {
		t.Errorf("%d finals, want 4", got)
	}
	if got := count(srv, ints); got != 6 {
		t.Errorf("%d intents, want 6", got)
	}
	if got := count(srv, errs); got != 2 {
		t.Errorf("%d error messages, want 2 (the malformed line, the approval timeout)", got)
	}
}

// The demo's Pub/Sub topics and input subscription.
const (
	demoIn        = "projects/p/topics/in"
	demoSub       = "projects/p/subscriptions/in"
	demoFinals    = "projects/p/topics/finals"
	demoIntents   = "projects/p/topics/intents"
	demoErrors    = "projects/p/topics/errors"
	demoSnapshots = "projects/p/topics/snapshots"
)

// demoPubSub starts a pstest server (PUBSUB_EMULATOR_HOST points at it for the test) with the
// demo's topics and input subscription and writes a keyring; it returns the server, the
// keyring's path and the demo's lines with their results and approvals signed as an effector
// signs them (the run verifies them: --verify_results require, the default with a keyring).
func demoPubSub(t *testing.T) (*pstest.Server, string, [][]byte) {
	t.Helper()
	srv := pstest.NewServer()
	t.Cleanup(func() { srv.Close() })
	t.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	ctx := context.Background()
	for _, topic := range []string{demoIn, demoFinals, demoIntents, demoErrors, demoSnapshots} {
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: demoSub, Topic: demoIn, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	ring := t.TempDir() + "/ring.json"
	secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	if err := os.WriteFile(ring, []byte(`{"active":"k","keys":[{"id":"k","secret":"`+secret+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := intent.LoadKeyring("file:" + ring)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := signDemoAnswers(ctx, support.Name, support.Envelopes, kr)
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(signed))
	for sc.Scan() {
		lines = append(lines, bytes.Clone(sc.Bytes()))
	}
	return srv, ring, lines
}

// streamUntil runs the command line args (a streaming run) until until holds, then
// interrupts it and returns its stdout and stderr; the run must drain and exit 0.
func streamUntil(t *testing.T, timeout time.Duration, until func() bool, args ...string) (string, string) {
	t.Helper()
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := runCLI(t, "", args...)
		done <- result{code, out, errOut}
	}()
	deadline := time.After(timeout)
	for !until() {
		select {
		case r := <-done:
			t.Fatalf("run ended early: exit %d\n%s\n%s", r.code, r.out, r.errOut)
		case <-deadline:
			t.Fatalf("no outputs within %s", timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	r := <-done
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.out, r.errOut)
	}
	return r.out, r.errOut
}

func count(srv *pstest.Server, topic string) int {
	n := 0
	for _, m := range srv.Messages() {
		if m.Topic == topic {
			n++
		}
	}
	return n
}

func allAcked(srv *pstest.Server, topic string, n int) bool {
	acked := 0
	for _, m := range srv.Messages() {
		if m.Topic == topic && m.Acks > 0 {
			acked++
		}
	}
	return acked == n
}
