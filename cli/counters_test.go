package cli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/internal/testkit/llmtest"
	"github.com/beamagents/beamagents/records"
)

// The counters run prints equal the records it wrote, in every run: the same run of the real
// binary, twenty times, over traffic whose records come from many keys run in parallel
// bundles by a model answering after 100 ms (final replies, TOOL and APPROVAL intents and
// their escalations, dead letters of seven reasons, snapshots), prints per output, per
// dead-letter reason and per intent kind exactly what its files hold.
func TestPrintedCountersEqualTheRecordsWritten(t *testing.T) {
	srv := llmtest.New(llmtest.OpenAI, func(_ int, body []byte) llmtest.Reply {
		hang := 100 * time.Millisecond
		switch {
		case bytes.Contains(body, []byte("ORDER:")):
			return llmtest.Reply{Hang: hang, Text: `{"case":"support.lookup_order","fields":{"support.lookup_order.order_id":"A-1001"}}`}
		case bytes.Contains(body, []byte("REFUND:")):
			return llmtest.Reply{Hang: hang, Text: `{"case":"support.refund","fields":{"support.refund.order_id":"A-2002","support.refund.amount_cents":4599,"support.refund.reason":"arrived broken"}}`}
		case bytes.Contains(body, []byte("GREETING:")):
			return llmtest.Reply{Hang: hang, Text: `{"case":"support.reply","fields":{"support.reply.text":"hello to you"}}`}
		}
		return llmtest.Reply{Hang: hang, Status: 400}
	})
	defer srv.Close()
	dir := t.TempDir()
	input := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(input, countedTraffic(t), 0o644); err != nil {
		t.Fatal(err)
	}
	const runs = 20
	for i := range runs {
		out := filepath.Join(dir, fmt.Sprintf("out-%02d", i))
		code, stdout, stderr := execCLI(t, []string{"BEAMAGENTS_COUNTED_KEY=sk-counted"}, "run", "--agent", support.Name, "--allow_unsigned_intents",
			"--input", input, "--output_dir", out, "--at_end", "fail", "--model", "openai", "--model_name", "gpt-test", "--base_url", srv.BaseURL(), "--api_key", "env:BEAMAGENTS_COUNTED_KEY")
		if code != 0 {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
		printed := countersOf(t, stdout)
		want := countersInFiles(t, out)
		for name, n := range want {
			if printed[name] != n {
				t.Errorf("run %d: printed %s %d, the files hold %d", i, name, printed[name], n)
			}
		}
		for name, n := range printed {
			if _, ok := want[name]; !ok && n != 0 && countsRecords(name) {
				t.Errorf("run %d: printed %s %d, the files hold none", i, name, n)
			}
		}
		for _, name := range []string{"final_replies", "intents.TOOL", "intents.APPROVAL", "snapshots", "dead_letters.model_error",
			"dead_letters.activation_timeout", "dead_letters.approval_timeout", "dead_letters.orphaned_result",
			"dead_letters.approval_unknown", "dead_letters.envelope_invalid"} {
			if want[name] == 0 {
				t.Fatalf("run %d wrote no %s: the comparison would be vacuous (%v)", i, name, want)
			}
		}
		if t.Failed() {
			t.Fatalf("run %d printed:\n%s", i, stdout)
		}
	}
}

// countedTraffic is, each on keys of its own: 20 greetings the model answers (final replies),
// 12 order questions and 6 refund requests it answers with a lookup and a refund (TOOL and
// APPROVAL intents that nothing answers, so, run with --at_end fail, escalations and then
// activation_timeout and approval_timeout dead letters at the end of the input), 10 questions it refuses (400:
// model_error), 20 tool results and 10 approvals that match nothing pending
// (orphaned_result, approval_unknown), 3 export requests (snapshots) and 5 lines that are no
// envelope (envelope_invalid).
func countedTraffic(t *testing.T) []byte {
	t.Helper()
	var in bytes.Buffer
	const at = int64(1767225600000)
	add := func(env *pb.AgentEnvelope) {
		line, err := protojson.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		json.Compact(&in, line)
		in.WriteByte('\n')
	}
	event := func(key, text string, i int) {
		add(&pb.AgentEnvelope{EntityKey: []byte(key), EventTimeMs: at + int64(i)*1000,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: []byte(text)}})
	}
	for i := range 20 {
		event(fmt.Sprintf("greet-%02d", i), fmt.Sprintf("GREETING: hello, %d here", i), i)
	}
	for i := range 12 {
		event(fmt.Sprintf("order-%02d", i), fmt.Sprintf("ORDER: where is A-%d?", i), i)
	}
	for i := range 6 {
		event(fmt.Sprintf("refund-%02d", i), fmt.Sprintf("REFUND: please, A-%d", i), i)
	}
	for i := range 10 {
		event(fmt.Sprintf("refused-%02d", i), fmt.Sprintf("question %d", i), i)
	}
	for i := range 3 {
		add(&pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "greet-%02d", i), EventTimeMs: at + 600000,
			Payload: &pb.AgentEnvelope_ExportRequest{ExportRequest: &pb.AgentEnvelope_StateExportRequest{RequestId: fmt.Sprintf("export-%d", i)}}})
	}
	for i := range 20 {
		key := fmt.Appendf(nil, "orphan-%02d", i)
		add(&pb.AgentEnvelope{EntityKey: key, EventTimeMs: at + int64(i)*1000, Payload: &pb.AgentEnvelope_ToolResult{ToolResult: &pb.ToolResult{
			EntityKey: key, IntentId: fmt.Sprintf("00000000-0000-5000-8000-%012d", i), Status: pb.ToolResult_OK, Payload: []byte("{}"), CompletedAtMs: at}}})
	}
	for i := range 10 {
		add(&pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "unknown-%02d", i), EventTimeMs: at + int64(i)*1000, Payload: &pb.AgentEnvelope_Approval_{
			Approval: &pb.AgentEnvelope_Approval{IntentId: fmt.Sprintf("00000000-0000-5000-9000-%012d", i), Approved: true, Approver: "ops", DecidedAtMs: at}}})
	}
	for i := range 5 {
		fmt.Fprintf(&in, "{\"entityKey\": %q, \"externalEvent\": \"not base64 %d!\"\n", base64.StdEncoding.EncodeToString([]byte("broken")), i)
	}
	return in.Bytes()
}

// countsRecords reports whether a printed counter counts records of an output.
func countsRecords(name string) bool {
	head, _, _ := strings.Cut(name, ".")
	switch head {
	case "intents", "final_replies", "snapshots", "dead_letters", "records_written":
		return true
	}
	return false
}

// countersOf reads the counters run prints at the end ("  name value" lines).
func countersOf(t *testing.T, stdout string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(line, "  ") {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				m[f[0]] = n
			}
		}
	}
	return m
}

// countersInFiles is what the counters of records must say about the files of dir: each
// output's records, the intents by kind and the dead letters by reason.
func countersInFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for _, k := range records.Kinds() {
		b, err := os.ReadFile(filepath.Join(dir, k.Name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
		if len(b) == 0 {
			lines = nil
		}
		m["records_written."+k.Name] = int64(len(lines))
		for _, line := range lines {
			rec := k.New()
			if err := protojson.Unmarshal(line, rec); err != nil {
				t.Fatalf("%s: %v", k.Name, err)
			}
			switch r := rec.(type) {
			case *pb.ToolIntent:
				m["intents"]++
				m["intents."+r.GetKind().String()]++
			case *pb.FinalReply:
				m["final_replies"]++
			case *pb.StateSnapshot:
				m["snapshots"]++
			case *pb.ActivationErrorRecord:
				m["dead_letters"]++
				m["dead_letters."+r.GetReason()]++
			}
		}
	}
	return m
}
