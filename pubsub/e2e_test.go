package pubsub_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub/wire"
)

// The example's envelopes published to Pub/Sub (binary, one as protojson with
// content-type application/json, one malformed) come out on the topics exactly as the file
// run of the same input writes them, with ordering keys and attributes, in per-key order;
// the malformed message lands on the errors topic byte for byte and is acknowledged.
func TestPubSubMatchesFileRun(t *testing.T) {
	keyring := writeKeyring(t)
	envs, lines := supportEnvelopes(t)
	e := newEnv(t)
	for i, env := range envs {
		if i == 1 {
			e.publish(lines[1], map[string]string{wire.AttrContentType: "application/json; charset=utf-8"})
			continue
		}
		e.publish(marshal(t, env), nil)
	}
	malformed := lines[len(lines)-1]
	badID := e.publish(malformed, map[string]string{wire.AttrContentType: wire.ContentTypeJSON, "x": "y"})
	n := len(envs) + 1

	stream(t, e.options(t, keyring), 90*time.Second, func() bool { return e.inputAcked(n) })

	want := fileRun(t, keyring, bytes.Join(lines, []byte("\n")))
	for name, topic := range map[string]string{pipeline.IntentsName: e.intents, pipeline.TracesName: e.traces,
		pipeline.FinalsName: e.finals, pipeline.SnapshotsName: e.snapshots} {
		if diff := cmp.Diff(want[name], topicRecords(topic)); diff != "" {
			t.Errorf("%s differ from the file run (-file +pubsub):\n%s", name, diff)
		}
	}
	// The errors topic: RunAgent's dead letters as records, the malformed input verbatim.
	var records, rejected int
	for _, m := range messages(e.errorsTopic) {
		switch m.Attributes[wire.AttrType] {
		case wire.TypeRejectedInput:
			rejected++
			if !bytes.Equal(m.Data, malformed) || m.Attributes[wire.AttrOriginalMessageID] != badID ||
				m.Attributes[wire.AttrReason] != "envelope_invalid" || m.Attributes["x"] != "y" {
				t.Errorf("rejected input = %q %v", m.Data, m.Attributes)
			}
		case "beam_agents.v1.ActivationErrorRecord":
			records++
		default:
			t.Errorf("errors topic: unexpected type %q", m.Attributes[wire.AttrType])
		}
	}
	if rejected != 1 || records != len(want[pipeline.DeadLettersName])-1 {
		t.Errorf("errors topic: %d rejected inputs, %d records; want 1 and %d", rejected, records, len(want[pipeline.DeadLettersName])-1)
	}
	if m := srv.Message(badID); m.Acks == 0 {
		t.Errorf("the malformed message was not acknowledged")
	}
	checkAttributesAndOrder(t, e)
}

// checkAttributesAndOrder checks every output's attributes and ordering key, and that each
// key's intents were published in (seq, step, attempt) order and its traces in seq order.
func checkAttributesAndOrder(t *testing.T, e *env) {
	t.Helper()
	type pos struct{ seq, step, attempt int64 }
	for _, topic := range []string{e.intents, e.traces} {
		last := map[string]pos{}
		for _, m := range messages(topic) {
			var key []byte
			var p pos
			switch m.Attributes[wire.AttrType] {
			case "beam_agents.v1.ToolIntent":
				ti := &pb.ToolIntent{}
				mustUnmarshal(t, m.Data, ti)
				key, p = ti.GetEntityKey(), pos{ti.GetSeq(), int64(ti.GetStepIndex()), int64(ti.GetAttempt())}
				if m.Attributes[wire.AttrIntentID] != ti.GetIntentId() {
					t.Errorf("intent_id attribute %q, intent %q", m.Attributes[wire.AttrIntentID], ti.GetIntentId())
				}
			case "beam_agents.v1.TraceEvent":
				te := &pb.TraceEvent{}
				mustUnmarshal(t, m.Data, te)
				key, p = te.GetEntityKey(), pos{seq: te.GetSeq()}
				if m.Attributes[wire.AttrTraceID] == "" {
					t.Errorf("trace without trace_id attribute")
				}
			default:
				t.Fatalf("%s: type %q", topic, m.Attributes[wire.AttrType])
			}
			if m.OrderingKey != string(key) || m.Attributes[wire.AttrSchemaVersion] != wire.SchemaVersion {
				t.Errorf("ordering key %q for key %q, schema %q", m.OrderingKey, key, m.Attributes[wire.AttrSchemaVersion])
			}
			prev, seen := last[string(key)]
			if seen && slices.Compare([]int64{p.seq, p.step, p.attempt}, []int64{prev.seq, prev.step, prev.attempt}) < 0 {
				t.Errorf("%s: key %q published %v after %v", topic, key, p, prev)
			}
			last[string(key)] = p
		}
	}
}
