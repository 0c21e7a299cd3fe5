package pipeline_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/beamagents/beamagents/agent"
	"github.com/beamagents/beamagents/agent/bindings"
	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/negotiate"
	"github.com/beamagents/beamagents/pipeline"
	"github.com/beamagents/beamagents/records"
	"github.com/beamagents/beamagents/transforms"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// "support-fail-fast" is the support agent with its refund binding under FAIL_FAST: the payment
// service's tighter order-id bound is a non-empty delta, so the agent cannot be built.
func init() {
	agent.Register("support-fail-fast", func([]byte) (*agent.Agent, error) {
		def, err := support.Definition(support.ModelScript)
		if err != nil {
			return nil, err
		}
		def.Name = "support-fail-fast"
		spec := def.Tools[support.ToolRefund]
		spec.Agreement.Protocol = negotiate.FailFast
		def.Tools = map[string]agent.ToolDecl{support.ToolRefund: spec}
		return bindings.New(def)
	})
}

// A tool binding that FAIL_FAST refuses stops the pipeline at build time, listing the delta.
func TestBuildRefusesAFailFastDelta(t *testing.T) {
	_, s := beam.NewPipelineWithRoot()
	err := pipeline.Build(s, pipeline.Options{Options: transforms.Options{Agent: "support-fail-fast"}, Input: "in.jsonl", OutputDir: "out"})
	if !errors.Is(err, agent.ErrDefinition) || !strings.Contains(err.Error(), "negotiate_fail_fast") ||
		!strings.Contains(err.Error(), "type_mismatch(max_bytes)") || !strings.Contains(err.Error(), "payments.refund.order_id") {
		t.Fatalf("Build = %v", err)
	}
	if err := pipeline.Build(s, pipeline.Options{Options: transforms.Options{Agent: "no-such-agent"}, Input: "in.jsonl", OutputDir: "out"}); !errors.Is(err, agent.ErrDefinition) {
		t.Fatalf("unknown agent: %v", err)
	}
}

func writeKeyring(t *testing.T, dir string) string {
	t.Helper()
	ring := `{"active":"demo","keys":[{"id":"demo","secret":"` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)) + `"}]}`
	p := filepath.Join(dir, "keyring.json")
	if err := os.WriteFile(p, []byte(ring), 0o600); err != nil {
		t.Fatal(err)
	}
	return "file:" + p
}

func runSupport(t *testing.T, input, restore string) (string, *pipeline.Result) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	res, err := pipeline.Run(context.Background(), "", pipeline.Options{
		Options: transforms.Options{Agent: support.Name, Keyring: writeKeyring(t, dir)},
		Input:   input, Restore: restore, OutputDir: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// body is a typed record file's records, after its header.
func body(t *testing.T, b []byte) []byte {
	t.Helper()
	_, rest, err := records.Split(b)
	if err != nil {
		t.Fatal(err)
	}
	return rest
}

// The example's envelopes as JSON Lines and as length-delimited binary give the same outputs.
func TestJSONAndBinaryInputsAgree(t *testing.T) {
	dir := t.TempDir()
	jsonIn := filepath.Join(dir, "envelopes.jsonl")
	os.WriteFile(jsonIn, support.Envelopes, 0o644)
	var bin bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(support.Envelopes), []byte("\n")) {
		env := &pb.AgentEnvelope{}
		if protojson.Unmarshal(line, env) != nil {
			continue // the deliberately broken line has no binary form
		}
		protodelim.MarshalTo(&bin, env)
	}
	binIn := filepath.Join(dir, "envelopes.binpb")
	os.WriteFile(binIn, bin.Bytes(), 0o644)

	fromJSON, res := runSupport(t, jsonIn, "")
	fromBin, _ := runSupport(t, binIn, "")
	if res.Counters["activations"] != 9 || res.Counters["envelopes_invalid"] != 1 {
		t.Fatalf("counters %v", res.Counters)
	}
	for _, o := range pipeline.Outputs() {
		if o.Name == pipeline.DeadLettersName {
			continue // the JSON input has one more: its broken line
		}
		if !bytes.Equal(read(t, fromJSON, o.Name+".binpb"), read(t, fromBin, o.Name+".binpb")) {
			t.Errorf("%s differs between JSON and binary input", o.Name)
		}
	}
}

func TestBrokenFramingIsADeadLetter(t *testing.T) {
	dir := t.TempDir()
	var bin bytes.Buffer
	protodelim.MarshalTo(&bin, &pb.AgentEnvelope{EntityKey: []byte("customer-1"), EventTimeMs: 1767225600000,
		Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte("hi")}})
	bin.Write([]byte{0x7f, 'x'}) // a frame announcing 127 bytes, holding 1
	in := filepath.Join(dir, "broken.binpb")
	os.WriteFile(in, bin.Bytes(), 0o644)
	out, res := runSupport(t, in, "")
	if res.Counters["activations"] != 1 {
		t.Fatalf("counters %v", res.Counters)
	}
	dead := string(read(t, out, "dead_letters.jsonl"))
	if !strings.Contains(dead, "envelope_invalid") || !strings.Contains(dead, "broken record framing at byte") {
		t.Fatalf("dead letters %s", dead)
	}
}

// A typed binary file of another type than envelopes is one dead letter naming both types,
// and none of its records is read as an envelope (a dead letter's detail never becomes a
// customer's message).
func TestAFileOfAnotherTypeIsADeadLetter(t *testing.T) {
	dir := t.TempDir()
	rec, _ := proto.Marshal(&pb.ActivationErrorRecord{EntityKey: []byte("customer-4"), Reason: "model_error", Detail: "ops@example.com"})
	if err := pipeline.WriteLocal(dir, "dead_letters", "beam_agents.v1.ActivationErrorRecord", [][]byte{rec}); err != nil {
		t.Fatal(err)
	}
	out, res := runSupport(t, filepath.Join(dir, "dead_letters.binpb"), "")
	if res.Counters["activations"] != 0 {
		t.Fatalf("counters %v", res.Counters)
	}
	dead := string(read(t, out, "dead_letters.jsonl"))
	if !strings.Contains(dead, "holds beam_agents.v1.ActivationErrorRecord records, not beam_agents.v1.AgentEnvelope") {
		t.Fatalf("dead letters %s", dead)
	}
}

// A key's exported snapshot, restored into a new pipeline, carries its state over: the
// counter continues and the memory is there.
func TestRestoreFromExportedSnapshots(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "envelopes.jsonl")
	os.WriteFile(in, support.Envelopes, 0o644)
	first, _ := runSupport(t, in, "")

	next := filepath.Join(dir, "next.jsonl")
	os.WriteFile(next, []byte(`{"entityKey":"Y3VzdG9tZXItNQ==","eventTimeMs":"1767229200000","exportRequest":{"requestId":"after-restore"}}`+"\n"), 0o644)
	second, res := runSupport(t, next, filepath.Join(first, "snapshots.binpb"))
	if res.Counters["dead_letters"] != 0 {
		t.Fatalf("counters %v", res.Counters)
	}
	snaps := string(read(t, second, "snapshots.jsonl"))
	if !strings.Contains(snaps, `"requestId":"after-restore"`) || !strings.Contains(snaps, `"seq":"1"`) || !strings.Contains(snaps, `"key":"contact"`) {
		t.Fatalf("restored snapshot %s", snaps)
	}
}

// The example run writes both forms of every output, and the JSON Lines are stable.
func TestSupportExampleOutputsAreStable(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "envelopes.jsonl")
	os.WriteFile(in, support.Envelopes, 0o644)
	a, _ := runSupport(t, in, "")
	b, _ := runSupport(t, in, "")
	for _, o := range pipeline.Outputs() {
		for _, ext := range []string{".jsonl", ".binpb"} {
			if !bytes.Equal(read(t, a, o.Name+ext), read(t, b, o.Name+ext)) {
				t.Errorf("%s%s differs between two runs", o.Name, ext)
			}
		}
	}
	if n := bytes.Count(read(t, a, "finals.jsonl"), []byte("\n")); n != 4 {
		t.Fatalf("%d final replies", n)
	}
}
