package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protodelim"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/testkit/otlpreceiver"
	"github.com/beamagents/beamagents/pipeline"
)

// startJobServer starts Prism's job service (the Beam Job API, as a Flink job server serves
// it) on a loopback port and returns its endpoint.
func startJobServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := prism.CreateJobServer(context.Background(), prism.Options{Port: port}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("localhost:%d", port)
}

func supportRunArgs(t *testing.T, dir string) []string {
	t.Helper()
	in := filepath.Join(dir, "envelopes.jsonl")
	ring := filepath.Join(dir, "ring.json")
	os.WriteFile(ring, []byte(`{"active":"k","keys":[{"id":"k","secret":"`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))+`"}]}`), 0o600)
	kr, err := intent.LoadKeyring("file:" + ring)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded results and approvals signed as an effector signs them (the run verifies
	// them: --verify_results require is the default with a keyring).
	signed, err := signDemoAnswers(context.Background(), support.Name, support.Envelopes, kr)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(in, signed, 0o644)
	return []string{"run", "--agent", support.Name, "--input", in, "--keyring", "file:" + ring}
}

// `run --runner universal|flink --endpoint HOST:PORT --environment_type LOOPBACK` submits the
// pipeline over the Job API to a job service, and its outputs are byte for byte those of the
// in-process Prism run; the counters come back from the job service's metrics.
func TestRunThroughJobService(t *testing.T) {
	dir := t.TempDir()
	args := supportRunArgs(t, dir)
	endpoint := startJobServer(t)
	outs := map[string]string{}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"prism in process", nil},
		{"universal", []string{"--runner", "universal", "--endpoint", endpoint, "--environment_type", "LOOPBACK"}},
		{"flink path", []string{"--runner", "flink", "--endpoint", endpoint, "--environment_type", "LOOPBACK", "--job_name", "flink-path", "--parallelism", "2"}},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		start := time.Now()
		code, stdout, stderr := runCLI(t, "", append(append(args, "--output_dir", out), tc.flags...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", tc.name, code, stdout, stderr)
		}
		t.Logf("%s: %s", tc.name, time.Since(start))
		for _, want := range []string{"activations                    9", "dead_letters.envelope_invalid  1", "input_tokens", "activation_latency_us          n=9"} {
			if !strings.Contains(stdout, want) {
				t.Fatalf("%s: metrics lack %q:\n%s", tc.name, want, stdout)
			}
		}
		outs[tc.name] = out
	}
	for _, o := range pipeline.Outputs() {
		want := readFile(t, outs["prism in process"], o.Name+".binpb")
		for name, out := range outs {
			if got := readFile(t, out, o.Name+".binpb"); !bytes.Equal(got, want) {
				t.Errorf("%s: %s differs from the in-process run", name, o.Name)
			}
		}
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// --shards writes every output as shards whose records, together, are the sorted writer's.
func TestRunShardedOutputs(t *testing.T) {
	dir := t.TempDir()
	args := supportRunArgs(t, dir)
	sorted, sharded := filepath.Join(dir, "sorted"), filepath.Join(dir, "sharded")
	if code, o, e := runCLI(t, "", append(args, "--output_dir", sorted)...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, o, e)
	}
	if code, o, e := runCLI(t, "", append(args, "--output_dir", sharded, "--shards", "3")...); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, o, e)
	}
	for _, o := range pipeline.Outputs() {
		want := sortedLines(readFile(t, sorted, o.Name+".jsonl"))
		files, _ := filepath.Glob(filepath.Join(sharded, o.Name+"-*-of-00003.jsonl"))
		var got []byte
		for _, f := range files {
			b, _ := os.ReadFile(f)
			got = append(got, b...)
		}
		if got := sortedLines(got); !slices.Equal(got, want) {
			t.Errorf("%s: %d records in %d shards, want %d", o.Name, len(got), len(files), len(want))
		}
	}
}

func sortedLines(b []byte) []string {
	l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(l)
	return l
}

// --otlp_endpoint exports every trace event the run writes as a span, over gRPC or HTTP, to
// a real OTLP receiver on loopback, with the same trace and span ids and parents.
func TestRunExportsTracesOverOTLP(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		start    func() (*otlpreceiver.Receiver, error)
	}{
		{"grpc", otlpreceiver.StartGRPC},
		{"http", otlpreceiver.StartHTTP},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			r, err := tc.start()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			args := append(supportRunArgs(t, dir), "--output_dir", out, "--otlp_endpoint", r.Endpoint, "--otlp_protocol", tc.protocol, "--otlp_insecure")
			if code, o, e := runCLI(t, "", args...); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, o, e)
			}
			events, err := readOutput(out, pipeline.TracesName, func() *pb.TraceEvent { return &pb.TraceEvent{} })
			if err != nil {
				t.Fatal(err)
			}
			// Events of one span id (an attempt's START and END; an escalation's re-emitted
			// SUSPENDED) merge into one span when they are exported together; exported from
			// different bundles they are versions of the span with the same id.
			spans := map[string][]*tracepb.Span{}
			for _, s := range r.Spans() {
				id := string(s.GetTraceId()) + string(s.GetSpanId())
				spans[id] = append(spans[id], s)
			}
			ids := map[string]bool{}
			for _, ev := range events {
				ids[string(ev.GetTraceId())+string(ev.GetSpanId())] = true
			}
			if len(events) == 0 || len(spans) != len(ids) {
				t.Fatalf("%d span ids received for %d trace events of %d span ids", len(spans), len(events), len(ids))
			}
			for _, ev := range events {
				if !exported(spans[string(ev.GetTraceId())+string(ev.GetSpanId())], ev) {
					t.Errorf("event %v: no span with its parent and attributes among %v", ev, spans[string(ev.GetTraceId())+string(ev.GetSpanId())])
				}
			}
		})
	}
}

// exported reports whether one of the spans of ev's id carries ev: as the span itself, or as
// one of its span events.
func exported(spans []*tracepb.Span, ev *pb.TraceEvent) bool {
	for _, s := range spans {
		if len(s.GetEvents()) > 0 {
			if spanEvent(s, ev) != nil {
				return true
			}
			continue
		}
		ok := bytes.Equal(s.GetParentSpanId(), ev.GetParentSpanId())
		for k, v := range ev.GetAttributes() {
			ok = ok && hasAttr(s.GetAttributes(), k, v)
		}
		if ok {
			return true
		}
	}
	return false
}

// spanEvent finds ev among the span events of s, the span its id merged it into.
func spanEvent(s *tracepb.Span, ev *pb.TraceEvent) *tracepb.Span_Event {
	for _, se := range s.GetEvents() {
		if se.GetTimeUnixNano() == uint64(ev.GetStartMs())*1e6 && se.GetName() == strings.ToLower(ev.GetEventType().String()) {
			for k, v := range ev.GetAttributes() {
				if !hasAttr(se.GetAttributes(), k, v) {
					goto next
				}
			}
			return se
		}
	next:
	}
	return nil
}

func hasAttr(attrs []*commonpb.KeyValue, k, v string) bool {
	for _, kv := range attrs {
		if kv.GetKey() == k {
			val := kv.GetValue()
			return val.GetStringValue() == v || fmt.Sprint(val.GetIntValue()) == v
		}
	}
	return false
}

// The Dataflow flags reach the job Dataflow would get: a dry run (--dry_run) translates the
// pipeline into the Dataflow job and prints it without submitting, which needs no credentials.
// An in-place update (--update, --transform_name_mapping) is for streaming jobs only, and
// Beam refuses the mapping for a batch (file) pipeline.
func TestRunDataflowDryRun(t *testing.T) {
	dir := t.TempDir()
	base := append(supportRunArgs(t, dir), "--output_dir", "gs://my-bucket/out", "--runner", "dataflow", "--dry_run",
		"--project", "my-project", "--region", "europe-west1", "--staging_location", "gs://my-bucket/staging",
		"--temp_location", "gs://my-bucket/tmp", "--sdk_container_image", "europe-docker.pkg.dev/my-project/beamagents/worker:v1",
		"--job_name", "support-v1", "--shards", "16", "--verbose_runner",
		"--num_workers", "2", "--max_num_workers", "20", "--worker_machine_type", "n2-standard-4")
	code, out, errOut := runCLI(t, "", base...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Dry-run: not submitting job", "support-v1", "europe-docker.pkg.dev/my-project/beamagents/worker:v1",
		"gs://my-bucket/tmp", "WriteShards_intents", "RunAgent/transforms.runAgentFn", "n2-standard-4"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the printed job lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = runCLI(t, "", append(base, "--update", "--transform_name_mapping", `{"RunAgent/transforms.runAgentFn":"RunAgent/transforms.agentFn"}`)...)
	if code != 1 || !strings.Contains(errOut, "transform_name_mapping for a batch pipeline") {
		t.Fatalf("--update with a mapping on a batch pipeline: exit %d\n%s", code, errOut)
	}
}

// The documented rolling upgrade, by command: version A exports every key (binary input,
// arrival ordering, the model script given through --agent_config), version B restores the
// snapshots (--restore, which needs event-time ordering and refuses arrival order) and runs
// the rest into windowed shards; B's key continues at the next seq with nothing refused.
func TestRunRollingUpgradeCommands(t *testing.T) {
	dir := t.TempDir()
	ring := filepath.Join(dir, "ring.json")
	os.WriteFile(ring, []byte(`{"active":"k","keys":[{"id":"k","secret":"`+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))+`"}]}`), 0o600)
	script := filepath.Join(dir, "script.jsonl")
	os.WriteFile(script, support.ModelScript, 0o644)
	conf := filepath.Join(dir, "support.json")
	os.WriteFile(conf, []byte(`{"script":`+strconv.Quote(script)+`}`), 0o644)
	envs := func(path string, es ...*pb.AgentEnvelope) {
		var b bytes.Buffer
		for _, e := range es {
			protodelim.MarshalTo(&b, e)
		}
		os.WriteFile(path, b.Bytes(), 0o644)
	}
	key := []byte("customer-1")
	envs(filepath.Join(dir, "a.bin"),
		&pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1767225600000, Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("Hi, can you help me?")}},
		&pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1767225650000, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "upgrade"}}})
	envs(filepath.Join(dir, "b.bin"),
		&pb.AgentEnvelope{EntityKey: key, EventTimeMs: 1767225700000, Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: "after"}}})
	outA, outB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	common := []string{"run", "--agent", support.Name, "--keyring", "file:" + ring, "--agent_config", conf, "--input_format", "binary"}
	if code, o, e := runCLI(t, "", append(common, "--input", filepath.Join(dir, "a.bin"), "--output_dir", outA, "--ordering", "arrival")...); code != 0 {
		t.Fatalf("version A: exit %d\n%s\n%s", code, o, e)
	}
	b := append(common, "--input", filepath.Join(dir, "b.bin"), "--output_dir", outB,
		"--restore", filepath.Join(outA, "snapshots.binpb"), "--shards", "2", "--window", "1m")
	if code, _, e := runCLI(t, "", append(b, "--ordering", "arrival")...); code != 1 || !strings.Contains(e, "--ordering event_time") {
		t.Fatalf("a restore in arrival order: exit %d\n%s", code, e)
	}
	code, o, e := runCLI(t, "", append(b, "--ordering", "event_time")...)
	if code != 0 || strings.Contains(o, "dead_letters.") {
		t.Fatalf("version B: exit %d\n%s\n%s", code, o, e)
	}
	// In event-time order an output is timestamped at its input's event time: B's one
	// window is the minute of its export request.
	files, _ := filepath.Glob(filepath.Join(outB, "snapshots-*-*-0000?-of-00002.jsonl"))
	if len(files) != 1 {
		t.Fatalf("B's snapshot windows: %v", files)
	}
	if b := readFile(t, outB, filepath.Base(files[0])); !bytes.Contains(b, []byte(`"requestId":"after"`)) || !bytes.Contains(b, []byte(`"seq":"1"`)) {
		t.Fatalf("B's snapshot does not continue A's key: %s", b)
	}
}
