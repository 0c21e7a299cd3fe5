package pubsub_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// Every message published twice (two Pub/Sub messages, one envelope id): the agent runs once
// per envelope, so intents, finals, snapshots and dead letters are exactly the file run's,
// and the traces are the file run's plus one duplicate_delivery event per second copy.
func TestEveryMessageTwiceActsOnce(t *testing.T) {
	keyring := writeKeyring(t)
	envs, lines := supportEnvelopes(t)
	e := newEnv(t)
	for round := range 2 {
		for i, env := range envs {
			e.publish(marshal(t, env), map[string]string{wire.DefaultEnvelopeIDAttribute: fmt.Sprint("env-", i)})
		}
		if round == 0 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	res := stream(t, e.options(t, keyring), 90*time.Second, func() bool { return e.inputAcked(2 * len(envs)) })

	want := fileRun(t, keyring, bytes.Join(lines[:len(lines)-1], []byte("\n")))
	for name, topic := range map[string]string{pipeline.IntentsName: e.intents, pipeline.FinalsName: e.finals,
		pipeline.SnapshotsName: e.snapshots, pipeline.DeadLettersName: e.errorsTopic} {
		if diff := cmp.Diff(want[name], topicRecords(topic)); diff != "" {
			t.Errorf("%s differ from a single delivery (-once +twice):\n%s", name, diff)
		}
	}
	var traces, dups [][]byte
	for _, b := range topicRecords(e.traces) {
		te := &pb.TraceEvent{}
		mustUnmarshal(t, b, te)
		if te.GetAttributes()[pubsub.AttrEvent] == pubsub.EventDuplicate {
			dups = append(dups, b)
			continue
		}
		traces = append(traces, b)
	}
	if diff := cmp.Diff(want[pipeline.TracesName], traces); diff != "" {
		t.Errorf("traces differ from a single delivery (-once +twice):\n%s", diff)
	}
	if len(dups) != len(envs) {
		t.Errorf("%d duplicate_delivery traces, want %d", len(dups), len(envs))
	}
	if got := res.Counters["duplicates_dropped"]; got != int64(len(envs)) {
		t.Errorf("duplicates_dropped = %d, want %d", got, len(envs))
	}
	if got := res.Counters["activations"]; got != int64(len(envs)) {
		t.Errorf("activations = %d, want %d", got, len(envs))
	}
}
