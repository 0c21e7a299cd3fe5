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

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/beamagents/beamagents/examples/support"
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/records"
)

// The counters run prints equal the records it wrote, in every run: the same run of the real
// binary, twenty times over traffic whose dead letters (of five reasons), intents, final
// replies and snapshot come from many keys run in parallel bundles, prints per output and
// per dead-letter reason and intent kind exactly what its files hold.
func TestPrintedCountersEqualTheRecordsWritten(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(input, countedTraffic(t), 0o644); err != nil {
		t.Fatal(err)
	}
	const runs = 20
	for i := range runs {
		out := filepath.Join(dir, fmt.Sprintf("out-%02d", i))
		code, stdout, stderr := execCLI(t, nil, "run", "--agent", support.Name, "--allow_unsigned_intents", "--input", input, "--output_dir", out)
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
		if want["dead_letters"] < 70 || len(want) < 15 || want["final_replies"] == 0 || want["intents.APPROVAL"] == 0 || want["snapshots"] == 0 {
			t.Fatalf("run %d wrote too little to compare: %v", i, want)
		}
		if t.Failed() {
			t.Fatalf("run %d printed:\n%s", i, stdout)
		}
	}
}

// countedTraffic is the support example's envelopes and, on keys of their own: 40 external
// events the recorded model has no answer for (model_error), 20 tool results and 10 approvals
// that match nothing pending (orphaned_result, approval_unknown), and 5 lines that are no
// envelope (envelope_invalid).
func countedTraffic(t *testing.T) []byte {
	t.Helper()
	in := bytes.NewBuffer(bytes.Clone(support.Envelopes))
	if !bytes.HasSuffix(in.Bytes(), []byte("\n")) {
		in.WriteByte('\n')
	}
	const at = int64(1767225600000)
	add := func(env *pb.AgentEnvelope) {
		line, err := protojson.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		json.Compact(in, line)
		in.WriteByte('\n')
	}
	for i := range 40 {
		add(&pb.AgentEnvelope{EntityKey: fmt.Appendf(nil, "extra-%02d", i), EventTimeMs: at + int64(i)*1000,
			Payload: &pb.AgentEnvelope_ExternalEvent{ExternalEvent: fmt.Appendf(nil, "hello from %d", i)}})
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
		fmt.Fprintf(in, "{\"entityKey\": %q, \"externalEvent\": \"not base64 %d!\"\n", base64.StdEncoding.EncodeToString([]byte("broken")), i)
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
