package pubsub_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
)

// Crash and restart. The first job acknowledges its first bundles, then loses its
// acknowledgements (as a worker that dies between commit and finalization would) and is
// cancelled mid-stream; a second job on the same subscription gets every unacknowledged
// message again. Every envelope is accounted for (one final or intent per envelope), the
// acknowledged ones are never redelivered, and whatever both jobs emitted is byte-identical
// (same deterministic intent ids).
func TestCrashAndRestartAccountsForEveryEnvelope(t *testing.T) {
	const n = 40
	keyring := writeKeyring(t)
	e := newEnv(t)
	o := e.options(t, keyring)
	o.Agent = quickAgent
	o.PubSub.MaxMessages = 5 // several bundles, so the crash falls between them
	o.PubSub.AckExtension = 10 * time.Second
	ackFaults.set(e.sub, 2)
	defer ackFaults.set("", 0)
	ids := make([]string, n)
	start := time.Now().UnixMilli()
	for i := range n {
		text := "hello"
		if i%2 == 1 {
			text = "ORDER-LOOKUP please"
		}
		ids[i] = e.publish(marshal(t, &pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "crash-%02d", i), EventTimeMs: start + int64(i),
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}}), nil)
	}

	// Job 1: runs until its acknowledged messages have all produced their outputs and some
	// unacknowledged ones too, then is cancelled (not drained).
	ctx, cancel := context.WithCancel(context.Background())
	run1 := pubsub.NewRun()
	o1 := o
	o1.PubSub.Run = run1.ID()
	done := make(chan error, 1)
	go func() { _, err := pipeline.Run(ctx, "prism", o1); done <- err }()
	deadline := time.After(60 * time.Second)
	for {
		acked, outs := ackedKeys(ids), outputKeys(e)
		covered := len(acked) > 0
		for k := range acked {
			covered = covered && outs[k]
		}
		if covered && len(outs) > len(acked) {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("job 1: %d acked, %d keys with outputs", len(acked), len(outs))
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	<-done
	run1.Close()
	acked1 := ackedKeys(ids)
	if len(acked1) == 0 || len(acked1) == n {
		t.Fatalf("job 1 acknowledged %d of %d messages; the test needs a crash in between", len(acked1), n)
	}

	// Job 2: acknowledgements work again; runs until every message is acknowledged.
	ackFaults.set("", 0)
	stream(t, o, 60*time.Second, func() bool { return e.inputAcked(n) })

	outs := outputKeys(e)
	for i, id := range ids {
		key := fmt.Sprintf("crash-%02d", i)
		if !outs[key] {
			t.Errorf("envelope %s (key %s) has no output", id, key)
		}
		if m := srv.Message(id); acked1[key] && m.Deliveries != 1 {
			t.Errorf("message %s acknowledged by job 1 was delivered %d times", id, m.Deliveries)
		}
	}
	redelivered := 0
	for _, id := range ids {
		if srv.Message(id).Deliveries > 1 {
			redelivered++
		}
	}
	if redelivered == 0 {
		t.Errorf("no message was redelivered")
	}
	// Duplicates only as identical bytes: one version per intent id and attempt (the
	// deadline's escalations re-emit an intent with the next attempt), and per final's key.
	byID := map[string][]byte{}
	intentIDs := map[string]bool{}
	for _, m := range messages(e.intents) {
		ti := &pb.ToolIntent{}
		mustUnmarshal(t, m.Data, ti)
		k := fmt.Sprint(ti.GetIntentId(), "/", ti.GetAttempt())
		if prev, ok := byID[k]; ok && !bytes.Equal(prev, m.Data) {
			t.Errorf("intent %s published with different bytes", k)
		}
		byID[k] = m.Data
		intentIDs[ti.GetIntentId()] = true
	}
	if len(intentIDs) != n/2 {
		t.Errorf("%d distinct intent ids, want %d (one lookup per odd envelope)", len(intentIDs), n/2)
	}
	finals := map[string][]byte{}
	for _, m := range messages(e.finals) {
		if prev, ok := finals[m.OrderingKey]; ok && !bytes.Equal(prev, m.Data) {
			t.Errorf("final of %s published with different bytes", m.OrderingKey)
		}
		finals[m.OrderingKey] = m.Data
	}
	t.Logf("job 1 acknowledged %d of %d; %d redelivered; %d intent messages for %d intent ids",
		len(acked1), n, redelivered, len(messages(e.intents)), len(intentIDs))
}

// ackedKeys returns the entity keys of the acknowledged messages among ids.
func ackedKeys(ids []string) map[string]bool {
	out := map[string]bool{}
	for i, id := range ids {
		if m := srv.Message(id); m != nil && m.Acks > 0 {
			out[fmt.Sprintf("crash-%02d", i)] = true
		}
	}
	return out
}

// outputKeys returns the keys with a final (replies) or an intent (lookups).
func outputKeys(e *env) map[string]bool {
	out := map[string]bool{}
	for _, topic := range []string{e.finals, e.intents} {
		for _, m := range messages(topic) {
			out[m.OrderingKey] = true
		}
	}
	return out
}
