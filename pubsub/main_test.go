package pubsub_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/pubsub"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

// srv is the in-memory Pub/Sub server every test talks to over loopback; the client library
// (and so the pipeline's workers, which Prism runs in this process) finds it through
// PUBSUB_EMULATOR_HOST.
var srv *pstest.Server

func TestMain(m *testing.M) {
	srv = pstest.NewServer(pstest.ServerReactorOption{FuncName: "Acknowledge", Reactor: ackFaults},
		pstest.ServerReactorOption{FuncName: "Publish", Reactor: publishFaults})
	os.Setenv("PUBSUB_EMULATOR_HOST", srv.Addr)
	code := ptest.MainRet(m)
	srv.Close()
	os.Exit(code)
}

const project = "projects/p"

// publishFaults makes every Publish to one topic fail.
var publishFaults = &publishFaulter{}

type publishFaulter struct{ topic atomic.Value }

func (f *publishFaulter) React(req any) (bool, any, error) {
	r, ok := req.(*pubsubpb.PublishRequest)
	if t, _ := f.topic.Load().(string); !ok || t == "" || r.GetTopic() != t {
		return false, nil, nil
	}
	return true, &pubsubpb.PublishResponse{}, status.Error(codes.PermissionDenied, "publishing refused")
}

// ackFaults makes Acknowledge fail for one subscription after a number of successful calls:
// from then on the pipeline's acknowledgements are lost, as when a worker dies after its
// bundles committed but before their finalization reached Pub/Sub.
var ackFaults = &ackFaulter{}

type ackFaulter struct {
	mu    sync.Mutex
	sub   string
	allow int
}

func (f *ackFaulter) set(sub string, allow int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sub, f.allow = sub, allow
}

func (f *ackFaulter) React(req any) (bool, any, error) {
	r, ok := req.(*pubsubpb.AcknowledgeRequest)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !ok || r.GetSubscription() != f.sub {
		return false, nil, nil
	}
	if f.allow > 0 {
		f.allow--
		return false, nil, nil
	}
	return true, &emptypb.Empty{}, status.Error(codes.FailedPrecondition, "acknowledgements lost")
}

var seq atomic.Int64

// env is one test's topics and subscription, uniquely named.
type env struct {
	in, sub                                         string
	intents, traces, finals, snapshots, errorsTopic string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	n := seq.Add(1)
	name := func(kind, s string) string { return fmt.Sprintf("%s/%s/%s-%d", project, kind, s, n) }
	e := &env{in: name("topics", "in"), sub: name("subscriptions", "in"), intents: name("topics", "intents"),
		traces: name("topics", "traces"), finals: name("topics", "finals"), snapshots: name("topics", "snapshots"),
		errorsTopic: name("topics", "errors")}
	ctx := context.Background()
	for _, topic := range []string{e.in, e.intents, e.traces, e.finals, e.snapshots, e.errorsTopic} {
		if _, err := srv.GServer.CreateTopic(ctx, &pubsubpb.Topic{Name: topic}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.GServer.CreateSubscription(ctx, &pubsubpb.Subscription{Name: e.sub, Topic: e.in, AckDeadlineSeconds: 10}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) options(t testing.TB, keyring string) pipeline.Options {
	return pipeline.Options{
		Options:           transforms.Options{Agent: support.Name, Keyring: keyring},
		InputSubscription: e.sub, IntentsTopic: e.intents, TracesTopic: e.traces, FinalsTopic: e.finals,
		SnapshotsTopic: e.snapshots, ErrorsTopic: e.errorsTopic,
	}
}

// publish publishes data to the input topic and returns the message id.
func (e *env) publish(data []byte, attrs map[string]string) string {
	return srv.Publish(e.in, data, attrs)
}

// messages returns the messages published to topic, in publish order.
func messages(topic string) []*pstest.Message {
	var out []*pstest.Message
	for _, m := range srv.Messages() {
		if m.Topic == topic {
			out = append(out, m)
		}
	}
	return out
}

// inputAcked reports whether every message of the input topic was acknowledged.
func (e *env) inputAcked(n int) bool {
	ms := messages(e.in)
	if len(ms) < n {
		return false
	}
	for _, m := range ms {
		if m.Acks == 0 {
			return false
		}
	}
	return true
}

// stream runs the pipeline until cond holds (checked every 50ms), drains it and waits for it
// to finish; it fails the test after timeout.
func stream(t testing.TB, o pipeline.Options, timeout time.Duration, cond func() bool) *pipeline.Result {
	t.Helper()
	run := pubsub.NewRun()
	defer run.Close()
	o.PubSub.Run = run.ID()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type result struct {
		res *pipeline.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := pipeline.Run(ctx, "prism", o)
		done <- result{res, err}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case r := <-done:
			t.Fatalf("pipeline ended before the condition held: %v", r.err)
		case <-ctx.Done():
			t.Fatalf("condition not met within %s (status %+v)", timeout, run.Status())
		case <-tick.C:
		}
	}
	t.Logf("status before the drain: %+v", run.Status())
	run.Drain()
	r := <-done
	if r.err != nil {
		t.Fatalf("pipeline: %v", r.err)
	}
	return r.res
}

func writeKeyring(t testing.TB) string {
	t.Helper()
	ring := `{"active":"k","keys":[{"id":"k","secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32)) + `"}]}`
	p := filepath.Join(t.TempDir(), "keyring.json")
	if err := os.WriteFile(p, []byte(ring), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file:" + p
}

// supportEnvelopes are the example's envelopes: the valid ones as messages, and the raw lines.
func supportEnvelopes(t testing.TB) (envs []*pb.AgentEnvelope, lines [][]byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(support.Envelopes))
	for sc.Scan() {
		line := bytes.Clone(sc.Bytes())
		lines = append(lines, line)
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) == nil {
			envs = append(envs, env)
		}
	}
	return envs, lines
}

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fileRun runs the same agent over the same envelopes from a file and returns each output's
// records, sorted.
func fileRun(t testing.TB, keyring string, input []byte) map[string][][]byte {
	t.Helper()
	return fileRunAgent(t, keyring, support.Name, input)
}

func fileRunAgent(t testing.TB, keyring, agentName string, input []byte) map[string][][]byte {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, input, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), "prism", pipeline.Options{Options: transforms.Options{Agent: agentName, Keyring: keyring}, Input: in, OutputDir: out}); err != nil {
		t.Fatal(err)
	}
	recs := map[string][][]byte{}
	for _, o := range pipeline.Outputs() {
		b, err := os.ReadFile(filepath.Join(out, o.Name+".binpb"))
		if err != nil {
			t.Fatal(err)
		}
		if _, b, err = records.Split(b); err != nil { // the typed file's header
			t.Fatal(err)
		}
		for len(b) > 0 {
			n, w := binary.Uvarint(b)
			if w <= 0 || n > uint64(len(b)-w) {
				t.Fatalf("%s.binpb: broken framing", o.Name)
			}
			recs[o.Name] = append(recs[o.Name], b[w:w+int(n)])
			b = b[w+int(n):]
		}
	}
	return recs
}

// topicRecords returns the data of the messages on topic, sorted.
func topicRecords(topic string) [][]byte {
	var out [][]byte
	for _, m := range messages(topic) {
		out = append(out, m.Data)
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

func mustUnmarshal(t testing.TB, b []byte, m proto.Message) {
	t.Helper()
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
}
